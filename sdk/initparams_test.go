package sdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/protocol"
)

// initParamsInputs are initialize params in the shape hosts send and
// variations on it that the hand path must leave to json.Unmarshal.
var initParamsInputs = []string{
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
}

// TestDecodeInitParams checks that decodeInitParams decodes as
// decodeParams (json.Unmarshal) does, result and error, and takes the
// hand path for the shapes hosts send.
func TestDecodeInitParams(t *testing.T) {
	for _, in := range initParamsInputs {
		checkInitParams(t, in)
	}
	for _, in := range initParamsInputs[:3] {
		var p protocol.InitializeParams
		if !(&initScanner{data: []byte(in)}).params(&p) {
			t.Errorf("%s: not decoded by hand", in)
		}
	}
}

func checkInitParams(t *testing.T, in string) {
	t.Helper()
	var want, got protocol.InitializeParams
	wantErr := decodeParams(json.RawMessage(in), &want)
	raw := []byte(in)
	gotErr := decodeInitParams(raw, &got)
	for i := range raw {
		raw[i] = 'x' // the result must not alias the params
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotErr, wantErr) {
		t.Fatalf("%q:\n got %#v, %v\nwant %#v, %v", in, got, gotErr, want, wantErr)
	}
}

// TestDecodeInitParamsDeep checks a config nested past the hand path's
// depth bound and past encoding/json's.
func TestDecodeInitParamsDeep(t *testing.T) {
	for _, depth := range []int{999, 1000, 1001, 10001} {
		checkInitParams(t, `{"config":`+strings.Repeat("[", depth)+strings.Repeat("]", depth)+`}`)
	}
}

func FuzzDecodeInitParams(f *testing.F) {
	for _, in := range initParamsInputs {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkInitParams(t, in)
	})
}
