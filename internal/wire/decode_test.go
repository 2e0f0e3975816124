package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/jsonscan"
	"github.com/extkernel/extkernel/protocol"
)

// maxScanDepth is the nesting the scanner follows.
const maxScanDepth = jsonscan.MaxDepth

// decodeTargets returns a fresh value of every type Decode has a fast path
// for.
func decodeTargets() []any {
	return []any{
		new(OutputResult), new(ProviderInvokeParams), new(StrategyInvokeParams), new(ActionRunParams),
		new(InterceptParams), new(protocol.InterceptResult), new(CancelParams), new(protocol.InitializeParams),
		new(protocol.InitializeResult), new(StreamChunkParams), new(StreamAckParams),
	}
}

// checkAgainstEncodingJSON checks every fast path on data against
// encoding/json: whatever the fast path accepts, encoding/json decodes to
// the same value, and a message DecodeMessage accepts is json.Unmarshal's.
// (The scanner itself is checked by package jsonscan's FuzzScan.)
func checkAgainstEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	var m Message
	if DecodeMessage(data, &m) == nil {
		var want Message
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("DecodeMessage decoded a message encoding/json refuses (%v): %q", err, data)
		}
		if !reflect.DeepEqual(m, want) {
			t.Fatalf("message %q: DecodeMessage %+v, encoding/json %+v", data, m, want)
		}
	}
	for _, v := range decodeTargets() {
		if !decodeFast(data, v) {
			if !reflect.ValueOf(v).Elem().IsZero() {
				t.Fatalf("%T written by a refused fast decoding of %q", v, data)
			}
			continue
		}
		want := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		if err := json.Unmarshal(data, want); err != nil {
			t.Fatalf("fast path decoded a %T encoding/json refuses (%v): %q", v, err, data)
		}
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("%T from %q: fast %+v, encoding/json %+v", v, data, v, want)
		}
	}
}

// initResultCase is an answer to initialize with every kind of declaration.
const initResultCase = `{"protocol_version":"1.0.0","name":"p","version":"1.0.0","provides":[{"capability":"c","version":"1.0.0"}],` +
	`"interceptors":[{"point":"a"},{"point":"b","priority":-5},{"point":"c","priority":1000}],"strategies":[{"slot":"s"}],` +
	`"providers":[{"ref":"echo","description":"d","schema":{"type":"object"}}],"actions":[{"id":"a","title":"A","placement":"toolbar"}]}`

// decodeCases are inputs where a hand-written decoder would most likely
// part ways with encoding/json.
var decodeCases = []string{
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
	`{"jsonrpc":"2.0","id":-,"result":{}}`,
	`{"jsonrpc":"2.0","id":1.,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e,"result":{}}`,
	`{"jsonrpc":"2.0","id":1E+2,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":[1,]}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a":1,}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"a" 1}}`,
	`{"jsonrpc":"2.0","id":1,"result":"\x"}`,
	`{"jsonrpc":"2.0","id":1,"result":"\u12"}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"a\tb\"}", // raw control character
	`{"jsonrpc":"2.0","id":1,"result":tru}`,
	`{"jsonrpc":"2.0","id":1,"result":[}`,
	`{"jsonrpc":"2.0","id":1,"result":{]}`,
	`{"jsonrpc":2,"id":1,"result":{}}`, // wrong type
	`{"jsonrpc":"2.0","id":1,"extra":1,"result":{}}`,
	`{}`, ` {} `, `{`, ``, `[]`, `"x"`, `null`,
	`{"ref":"echo","input":"x"}`, `{"ref":"echo"}`, `{"ref":1}`, `{"ref":"a","input":null}`,
	`{"ref":"a","Input":1}`, `{"ref":"a","input":1,"ref":"b"}`,
	`{"slot":"s","input":[1]}`, `{"id":"greet","context":{}}`, `{"point":"p","payload":{"x":1}}`,
	`{"decision":"modify","payload":{"x":1},"reason":"r"}`, `{"output":{"k":"v"}}`, `{"output":null}`,
	`{"id":7}`, `{"id":"7"}`,
	// streams
	`{"ref":"count","input":{"n":3},"stream":{"window":16}}`, `{"ref":"a","stream":{"window":0}}`, `{"ref":"a","stream":{}}`,
	`{"ref":"a","stream":{"window":1.5}}`, `{"ref":"a","stream":{"window":-3}}`, `{"ref":"a","stream":null}`, `{"ref":"a","stream":{"window":2,"x":1}}`,
	`{"id":7,"seq":1,"data":{"i":1}}`, `{"id":"c1","seq":12,"data":"x"}`, `{"id":7,"seq":0,"data":null}`, `{"id":7,"seq":-1,"data":1}`,
	`{"id":7,"seq":1.0,"data":1}`, `{"id":7,"seq":1e3,"data":1}`, `{"id":7,"seq":"1","data":1}`, `{"id":7,"seq":99999999999999999999,"data":1}`,
	`{"id":7,"seq":9223372036854775807}`, `{"id":7,"seq":9223372036854775808}`, `{"id":7,"seq":01}`, `{"id":7,"seq":3}`, `{"id":7,"seq":3,"seq":4}`,
	// initialize results
	initResultCase,
	`{"name":"p","provides":[],"interceptors":[ ],"actions":[{}]}`,
	`{"interceptors":[{"point":"a","priority":1.5}]}`, `{"interceptors":[{"point":"a","priority":1e2}]}`,
	`{"interceptors":[{"point":"a","priority":99999999999999999999}]}`, `{"interceptors":[{"point":"a","priority":-0}]}`,
	`{"interceptors":[{"point":"a","priority":"1"}]}`, `{"interceptors":[null]}`, `{"interceptors":[{"point":"a"},]}`,
	`{"interceptors":{"point":"a"}}`, `{"providers":[{"ref":"r","schema":null}]}`, `{"strategies":[{"slot":"s"}] , "strategies":[]}`,
	`{"actions":[{"id":"a"} {"id":"b"}]}`, `{"provides":[{"capability":"c","Version":"1"}]}`,
	// initialize params, and variations the fast path must leave to
	// encoding/json
	`{"protocol_version":"1.0.0","host":{"name":"bench","version":"0.0.0"},"plugin":{"name":"bench-00","version":"1.0.0"}}`,
	`{"protocol_version":"1.0.0","host":{"name":"kernel","version":"1.4.2"},"plugin":{"name":"p","version":"1.0.0","data_dir":"/data/p"},"config":{"key":"v","n":[1,2.5e3,true,null,{"x":"\"}]"}]},"session":{"id":"s1","user":"u"}}`,
	` { "protocol_version" : "1.0.0" , "host" : { } , "plugin" : { "name" : "p" } , "session" : { } } `,
	"{\n\t\"protocol_version\": \"2.0.0\",\r\n\"config\": \"text\"}\n",
	`{}`,
	`{"config":[]}`, `{"config":{}}`, `{"config":0}`, `{"config":-1.5e-7}`, `{"config":false}`, `{"config":"a\u00e9\n"}`,
	`{"config":[1,]}`, `{"config":{"a"}}`, `{"config":{"a":1,}}`, `{"config":01}`, `{"config":tru}`, `{"config":1 2}`,
	`{"config":"unterminated}`, `{"config":{"a":[}]}}`, `{"config":null}`, `{"config":nul}`,
	`{"config":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	`{"session":{"a":"1","a":"2"}}`, `{"session":{"a":null}}`, `{"session":{"a":1}}`, `{"session":[]}`, `{"session":null}`,
	`{"Protocol_Version":"1.0.0"}`, `{"PROTOCOL_VERSION":"1.0.0","protocol_version":"2.0.0"}`,
	`{"protocol_version":"1.0.0","protocol_version":"2.0.0"}`,
	`{"host":{"name":"a","name":"b"}}`, `{"host":{"Name":"a"}}`, `{"host":{"name":"a","extra":1}}`, `{"host":null}`, `{"host":"h"}`,
	`{"host":{"name":"a"},"host":{"version":"b"}}`, `{"plugin":{"data_dir":"C:\\dir"}}`, `{"plugin":{"name":"\u0070"}}`,
	`{"protocol_version":"é"}`, "{\"protocol_version\":\"a\x7fb\"}", "{\"protocol_version\":\"a\tb\"}", "{\"protocol_version\":\"\xff\"}",
	`{"protocol_version":1}`, `{"protocol_version":null}`, `{"protocol_version":"1.0.0"}x`, `{"protocol_version":"1.0.0"`,
	`{"protocol_version":"1.0.0",}`, `{,}`, `{"unknown":1}`, `{"unknown":{"deep":[1]}}`, `[]`, `null`, `"s"`, ``, ` `, `{`, `}`,
	`{"protocol_version" "1.0.0"}`, `{"protocol_version":"1.0.0" "host":{}}`, `{"host":{"name":"a",}}`, `{"host":{"name":"a" "version":"b"}}`,
	`{"session":{"k":"v",}}`, `{"session":{"k"}}`, `{"session":{"k\"":"v"}}`, `{"session":{"<&>":"<&>"}}`,
	strings.Repeat("[", maxScanDepth+1) + strings.Repeat("]", maxScanDepth+1),
	strings.Repeat("[", maxScanDepth) + strings.Repeat("]", maxScanDepth),
	`{"output":` + strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70) + "}",
}

func TestFastDecodeAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range decodeCases {
		checkAgainstEncodingJSON(t, []byte(c))
	}
	// Nested past the scanner's depth bound and past encoding/json's.
	for _, depth := range []int{999, 1000, 1001, 10001} {
		checkAgainstEncodingJSON(t, []byte(`{"config":`+strings.Repeat("[", depth)+strings.Repeat("]", depth)+`}`))
	}
}

// TestFastPathIsTaken checks that what the host and the SDK write is
// decoded by the fast path, for params and results with no allocation but
// the strings. (DecodeMessage's own fast path is checked in envelope_test.go.)
func TestFastPathIsTaken(t *testing.T) {
	params, _ := json.Marshal(ProviderInvokeParams{Ref: "echo", Input: json.RawMessage(`{"text":"hello, world","n":42}`)})
	initParams := []byte(`{"protocol_version":"1.0.0","host":{"name":"kernel","version":"1.4.2"},` +
		`"plugin":{"name":"p","version":"1.0.0","data_dir":"/data/p"},"config":{"k":[1]},"session":{"id":"s1"}}`)
	if !decodeFast(initParams, new(protocol.InitializeParams)) {
		t.Fatalf("fast path refused %s", initParams)
	}
	initResult := []byte(initResultCase)
	if !decodeFast(initResult, new(protocol.InitializeResult)) {
		t.Fatalf("fast path refused %s", initResult)
	}
	var p ProviderInvokeParams
	if !decodeFast(params, &p) || p.Ref != "echo" {
		t.Fatalf("fast path refused %s", params)
	}
	if n := testing.AllocsPerRun(100, func() { p = ProviderInvokeParams{}; _ = Decode(params, &p) }); n != 1 {
		t.Errorf("Decode(%s): %v allocations, want 1 (the ref)", params, n)
	}
	out := []byte(`{"output":{"text":"hello, world","n":42}}`)
	var r OutputResult
	if n := testing.AllocsPerRun(100, func() { r = OutputResult{}; _ = Decode(out, &r) }); n != 0 {
		t.Errorf("Decode(%s): %v allocations, want 0", out, n)
	}
}

// FuzzFastDecode checks the fast decoding paths against encoding/json on
// arbitrary input (see checkAgainstEncodingJSON).
func FuzzFastDecode(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(checkAgainstEncodingJSON)
}

// TestDecodeMergesLikeUnmarshal checks that Decode into a value already
// set keeps json.Unmarshal's merge (members absent from the input are
// kept).
func TestDecodeMergesLikeUnmarshal(t *testing.T) {
	got := protocol.InterceptResult{Decision: "deny", Reason: "kept"}
	want := got
	data := []byte(`{"decision":"continue"}`)
	if err := Decode(data, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode gave %+v, json.Unmarshal %+v", got, want)
	}
}
