package wire

import (
	"encoding/json"
	"reflect"
	"testing"
)

// checkEnvelopeFast checks the envelope's fast decoding on data against
// encoding/json: whatever it accepts, json.Unmarshal decodes to the same
// Message.
func checkEnvelopeFast(t *testing.T, data []byte) {
	t.Helper()
	var fast Message
	if !decodeMessageFast(data, &fast) {
		return
	}
	var want Message
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("fast path decoded a message encoding/json refuses (%v): %q", err, data)
	}
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("message %q: fast %+v, encoding/json %+v", data, fast, want)
	}
}

// envelopeCases are frames where a hand-written decoder would most likely
// part ways with encoding/json.
var envelopeCases = []string{
	`{"jsonrpc":"2.0","id":1,"method":"provider/invoke","params":{"ref":"echo","input":{"a":[1,2.5e-3,"x\u00e9\n"],"b":null,"c":true}}}`,
	`{"jsonrpc":"2.0","id":"a b","result":{"output":"x"}}`,
	` { "jsonrpc" : "2.0" , "id" : 1 , "result" : { "output" : [ 1 , { } , [ ] ] } } `,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`,
	`{"JSONRPC":"2.0","ID":1,"Result":{}}`,               // case-folded keys
	`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`,        // duplicate key
	`{"jsonrpc":"2.0","id":null,"result":{}}`,            // null id
	`{"jsonrpc":"2.0","id":1,"result":null}`,             // null result
	`{"jsonrpc":"2.\u0030","id":1,"result":{}}`,          // escaped string
	`{"jsonrpc":"2.0","method":"caf\u00e9"}`,             // escape in a method
	"{\"jsonrpc\":\"2.0\",\"method\":\"caf\xc3\xa9\"}",   // UTF-8 method
	"{\"jsonrpc\":\"2.0\",\"method\":\"bad\xff\"}",       // invalid UTF-8 method
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\"}", // invalid UTF-8 in a raw value
	`{"jsonrpc":"2.0","id":1,"result":{}}x`,              // trailing garbage
	`{"jsonrpc":"2.0","id":1,"result":{}`,                // unterminated
	`{"jsonrpc":"2.0","id":01,"result":{}}`,              // leading zero
	`{"jsonrpc":"2.0","id":1,"result":[1,]}`,
	`{"jsonrpc":2,"id":1,"result":{}}`, // wrong type
	`{"jsonrpc":"2.0","id":1,"extra":1,"result":{}}`,
	`{"jsonrpc":"2.0","method":"ping","id":1}`, `{"jsonrpc":"2.0","method":"initialize","id":1,"params":{}}`,
	`{}`, ` {} `, `{`, ``, `[]`, `"x"`, `null`,
}

func TestEnvelopeFastAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range envelopeCases {
		checkEnvelopeFast(t, []byte(c))
	}
}

// FuzzDecodeMessageFast checks the envelope's fast decoding against
// encoding/json on arbitrary input.
func FuzzDecodeMessageFast(f *testing.F) {
	for _, c := range envelopeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(checkEnvelopeFast)
}

// TestEnvelopeFastPathIsTaken checks that the frames the host and the SDK
// write are decoded by the fast path with one allocation (the copy the raw
// fields share): the version and the method names are not allocated.
func TestEnvelopeFastPathIsTaken(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"provider/invoke","params":{"ref":"echo","input":{"text":"hello, world","n":42}}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"output":{"text":"hello, world","n":42}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`,
	} {
		var m Message
		b := []byte(line)
		if !decodeMessageFast(b, &m) {
			t.Fatalf("fast path refused %s", line)
		}
		if n := testing.AllocsPerRun(100, func() { _ = DecodeMessage(b, &m) }); n != 1 {
			t.Errorf("DecodeMessage(%s): %v allocations, want 1", line, n)
		}
	}
}
