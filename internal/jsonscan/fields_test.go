package jsonscan

import (
	"encoding/json"
	"reflect"
	"testing"
)

// flat is a flat object with one field of each kind.
type flat struct {
	Name string          `json:"name"`
	Data json.RawMessage `json:"data"`
	N    *int            `json:"n"`
}

// known are the strings the tests decode without allocating.
var known = []string{"known"}

func (f *flat) fields() []Field {
	return []Field{{Key: "name", Str: &f.Name}, {Key: "data", Raw: &f.Data}, {Key: "n", Num: &f.N}}
}

// TestDecodeFields checks DecodeFields on each kind of member and on what
// it must refuse, against json.Unmarshal.
func TestDecodeFields(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{name: "all kinds", in: `{"name":"a","data":{"x":[1]},"n":-7}`, ok: true},
		{name: "empty", in: ` { } `, ok: true},
		{name: "spaced", in: ` { "name" : "a" , "n" : 0 } `, ok: true},
		{name: "known string", in: `{"name":"known"}`, ok: true},
		{name: "unknown key", in: `{"other":1}`},
		{name: "case-folded key", in: `{"Name":"a"}`},
		{name: "duplicate key", in: `{"name":"a","name":"b"}`},
		{name: "null value", in: `{"name":null}`},
		{name: "escaped string", in: `{"name":"\u0061"}`},
		{name: "non-ASCII string", in: `{"name":"é"}`},
		{name: "fraction", in: `{"n":1.5}`},
		{name: "exponent", in: `{"n":1e2}`},
		{name: "out of range", in: `{"n":99999999999999999999}`},
		{name: "string for a number", in: `{"n":"1"}`},
		{name: "number for a string", in: `{"name":1}`},
		{name: "trailing comma", in: `{"name":"a",}`},
		{name: "trailing garbage", in: `{"name":"a"}x`},
		{name: "not an object", in: `["name"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got flat
			if ok := DecodeFields([]byte(tt.in), known, got.fields()); ok != tt.ok {
				t.Fatalf("DecodeFields(%s) = %v, want %v", tt.in, ok, tt.ok)
			}
			if !tt.ok {
				return
			}
			var want flat
			if err := json.Unmarshal([]byte(tt.in), &want); err != nil {
				t.Fatalf("accepted what json.Unmarshal refuses: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, json.Unmarshal %+v", got, want)
			}
		})
	}
	var f flat
	in := []byte(`{"name":"known","data":[1]}`)
	if n := testing.AllocsPerRun(100, func() { f = flat{}; DecodeFields(in, known, f.fields()) }); n != 0 {
		t.Errorf("DecodeFields with a known string and a raw value: %v allocations, want 0", n)
	}
}
