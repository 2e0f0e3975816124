package wire

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestDecodeChunk holds DecodeChunk to json.Unmarshal on valid params: the
// layout the SDKs write, with escapes that end a string's scan where a
// naive one would not, and every layout it leaves to Decode.
func TestDecodeChunk(t *testing.T) {
	tests := []struct {
		params string
		fast   bool // the SDKs' layout: decoded without a second scan
	}{
		{`{"id":2,"seq":1,"data":"xxxx"}`, true},
		{`{"id":"c12","seq":99,"data":""}`, true},
		{`{"id":2,"seq":1,"data":"a\"b"}`, true},
		{`{"id":2,"seq":1,"data":"a\\"}`, true},
		{`{"id":2,"seq":1,"data":"a\\\"}\""}`, true},
		{`{"id":2,"seq":1,"data":"\\\\"}`, true},
		{`{"id":2,"seq":0,"data":"é\n"}`, true},
		{`{"id":2,"seq":1,"data":"a","x":"}"}`, false},
		{`{"id":2,"seq":1,"data":"a"  }`, false},
		{`{"id":2,"seq":1,"data":{"i":1}}`, false},
		{`{"id":2,"seq":1,"data":null}`, false},
		{`{"id":2,"seq":1,"data":[1,"}"]}`, false},
		{`{"id":"c\"1","seq":1,"data":"x"}`, false},
		{`{"id":-2,"seq":1,"data":"x"}`, false},
		{`{"seq":1,"id":2,"data":"x"}`, false},
		{`{"id":2,"seq":12345678901234567890,"data":"x"}`, false},
		{`{"id":2,"data":"x","seq":3}`, false},
		{` {"id":2,"seq":1,"data":"x"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.params, func(t *testing.T) {
			if !json.Valid([]byte(tt.params)) {
				t.Fatalf("invalid test params %s", tt.params)
			}
			var fast StreamChunkParams
			if got := decodeChunkValid([]byte(tt.params), &fast); got != tt.fast {
				t.Errorf("fast path taken: %v, want %v", got, tt.fast)
			}
			var got, want StreamChunkParams
			gotErr := DecodeChunk(json.RawMessage(tt.params), &got)
			wantErr := json.Unmarshal([]byte(tt.params), &want)
			if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
				t.Errorf("DecodeChunk = %+v, %v; json.Unmarshal %+v, %v", got, gotErr, want, wantErr)
			}
		})
	}
}

// TestCutChunkFrame holds CutChunkFrame and ValidChunkData to
// DecodeMessage then DecodeChunk: the frames it cuts with valid data
// decode to the same params the usual way, those with invalid data do not
// decode, and the ones it leaves (another layout, other members) are left
// whole, whatever DecodeMessage makes of them.
func TestCutChunkFrame(t *testing.T) {
	tests := []struct {
		frame string
		fast  bool
		valid bool // the data, once cut
	}{
		{`{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":2,"seq":1,"data":"xxxx"}}`, true, true},
		{`{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":"c3","seq":7,"data":"a\"}\\"}}`, true, true},
		{`{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":2,"seq":1,"data":{"a":1}}}`, false, false},
		{`{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":2,"seq":1,"data":"x\u0001"}}`, true, true},
		{"{\"jsonrpc\":\"2.0\",\"method\":\"$/stream/chunk\",\"params\":{\"id\":2,\"seq\":1,\"data\":\"x\x01\"}}", true, false},
		{`{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":2,"seq":1,"data":"x\q"}}`, true, false},
		{"{\"jsonrpc\":\"2.0\",\"method\":\"$/stream/chunk\",\"params\":{\"id\":\"c\x01\",\"seq\":1,\"data\":\"x\"}}", false, false},
		{`{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":2,"seq":1,"data":"x}}`, false, false},
		{`{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":2,"seq":1,"data":"x"},"id":4}`, false, false},
		{`{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":2,"seq":1,"data":"x"}} `, false, false},
		{`{"method":"$/stream/chunk","jsonrpc":"2.0","params":{"id":2,"seq":1,"data":"x"}}`, false, false},
		{`{"jsonrpc":"2.0","method":"$/stream/ack","params":{"id":2,"seq":1,"data":"x"}}`, false, false},
		{`{"jsonrpc":"2.0","method":"$/stream/chunk","params":}`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.frame, func(t *testing.T) {
			var got StreamChunkParams
			if fast := CutChunkFrame([]byte(tt.frame), &got); fast != tt.fast {
				t.Fatalf("CutChunkFrame = %v, want %v", fast, tt.fast)
			}
			if !tt.fast {
				return
			}
			var m Message
			err := DecodeMessage([]byte(tt.frame), &m)
			if valid := ValidChunkData(got.Data); valid != tt.valid || valid != (err == nil) {
				t.Fatalf("ValidChunkData(%s) = %v, want %v; DecodeMessage: %v", got.Data, valid, tt.valid, err)
			}
			if !tt.valid {
				return
			}
			var want StreamChunkParams
			if err := DecodeChunk(m.Params, &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("CutChunkFrame gave %+v, the usual way %+v", got, want)
			}
		})
	}
}

// FuzzCutChunkFrame: a frame CutChunkFrame cuts is a message DecodeMessage
// accepts exactly when ValidChunkData accepts its data, and then its
// params decode the same the usual way.
func FuzzCutChunkFrame(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":2,"seq":1,"data":"xxxx"}}`,
		`{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":"c3","seq":7,"data":"a\"}\\"}}`,
		`{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":"c\u00e9","seq":7,"data":"\ud800"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		var got StreamChunkParams
		if !CutChunkFrame(frame, &got) {
			return
		}
		var m Message
		err := DecodeMessage(frame, &m)
		if valid := ValidChunkData(got.Data); valid != (err == nil) {
			t.Fatalf("%q: ValidChunkData = %v, DecodeMessage: %v", frame, valid, err)
		}
		if err != nil {
			return
		}
		var want StreamChunkParams
		if err := DecodeChunk(m.Params, &want); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: CutChunkFrame %+v, the usual way %+v (%v)", frame, got, want, err)
		}
	})
}
