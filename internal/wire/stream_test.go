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
