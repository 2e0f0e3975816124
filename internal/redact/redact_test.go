package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

const secret = "s3cr3t-TOKEN"

var hide = Func(func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") })

// TestJSON: strings and keys are redacted wherever they are, escaped or
// not; a value nothing changes comes back as it is, byte for byte.
func TestJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, ``},
		{"untouched keeps its bytes", `{ "b" : 1, "a":[true,null, 2.50] }`, `{ "b" : 1, "a":[true,null, 2.50] }`},
		{"string", `"token ` + secret + `"`, `"token [REDACTED]"`},
		{"escaped", `"s3cr3t\u002dTOKEN"`, `"[REDACTED]"`},
		{"escaped quote kept", `{"a":"x\"y","b":"` + secret + `"}`, `{"a":"x\"y","b":"[REDACTED]"}`},
		{"nested and keys", `{"list":[1,"` + secret + `"],"` + secret + `":{"k":"v"}}`,
			`{"[REDACTED]":{"k":"v"},"list":[1,"[REDACTED]"]}`},
		{"keys that redact alike", `{"` + secret + `":1,"[REDACTED]":2}`, `{"[REDACTED]":2,"[REDACTED]#2":1}`},
		{"numbers kept exactly", `[12345678901234567890,"` + secret + `"]`, `[12345678901234567890,"[REDACTED]"]`},
		{"not JSON", `{"a": ` + secret, `"{\"a\": [REDACTED]"`},
		{"not JSON, no secret", `{"a": `, `{"a": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(hide.JSON(json.RawMessage(tt.in))); got != tt.want {
				t.Errorf("JSON(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestJSONUnchangedIsSame: a value with nothing to redact is returned
// itself, not a copy.
func TestJSONUnchangedIsSame(t *testing.T) {
	in := json.RawMessage(`{"a":"b"}`)
	if out := hide.JSON(in); &out[0] != &in[0] {
		t.Error("JSON copied a value it did not change")
	}
}

// TestObject: the map given is not modified; changed is set only when a
// string changed.
func TestObject(t *testing.T) {
	in := map[string]any{"k": secret, "n": 1.0}
	var changed bool
	out := hide.Object(in, &changed)
	if !changed || out["k"] != "[REDACTED]" || out["n"] != 1.0 || in["k"] != secret {
		t.Errorf("Object = %v (changed %v), input now %v", out, changed, in)
	}
	changed = false
	hide.Object(map[string]any{"k": "v"}, &changed)
	if changed {
		t.Error("changed set for a map without a secret")
	}
	if hide.Object(nil, &changed) != nil {
		t.Error("Object(nil) is not nil")
	}
}

// jsonCases are values whose strings hold the secret or not, escaped or
// not, valid or not.
var jsonCases = []string{
	``, `null`, `1`, `"x"`, `"` + secret + `"`, `"s3cr3t\u002dTOKEN"`, `"s3cr3t\u002DTOKEN"`,
	`{"a":"b"}`, `{"` + secret + `":1}`, `{"a":"` + secret + `","a":1}`, `{"a":1,"a":"` + secret + `"}`,
	`["\\", "\"", "\\\"` + secret + `"]`, `["s3cr3t-\ud83d\ude00"]`, `{"a": ` + secret, `{} {"a":"` + secret + `"}`,
	`"` + secret[:4] + `","` + secret[4:] + `"`, `["` + secret[:4] + `","` + secret[4:] + `"]`,
	` [ "x" , { "y" : "` + secret + `" } ] `, `"\u0073` + secret[1:] + `"`,
}

// TestJSONScanMatchesDecoding: the scan that spares decoding returns what
// decoding returns, for every case.
func TestJSONScanMatchesDecoding(t *testing.T) {
	for _, in := range jsonCases {
		got, want := hide.JSON(json.RawMessage(in)), hide.decoded(json.RawMessage(in))
		if in == "" {
			want = json.RawMessage(in)
		}
		if string(got) != string(want) {
			t.Errorf("JSON(%s) = %s, decoding gives %s", in, got, want)
		}
	}
}

// FuzzJSON holds the scan to decoding's result on any input.
func FuzzJSON(f *testing.F) {
	for _, in := range jsonCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if in == "" {
			return
		}
		got, want := hide.JSON(json.RawMessage(in)), hide.decoded(json.RawMessage(in))
		if string(got) != string(want) {
			t.Errorf("JSON(%q) = %q, decoding gives %q", in, got, want)
		}
	})
}

// TestJSONInvalidUTF8: a string with invalid UTF-8 is compared as decoding
// reads it, the invalid bytes as U+FFFD.
func TestJSONInvalidUTF8(t *testing.T) {
	r := Func(func(s string) string { return strings.ReplaceAll(s, "k\uFFFD", "[REDACTED]") })
	if got := string(r.JSON(json.RawMessage("[\"k\xff\"]"))); got != `["[REDACTED]"]` {
		t.Errorf("JSON = %q, want the decoded text redacted", got)
	}
}
