package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// checkScan checks the scanner and AppendCompact on data against
// encoding/json: what the scanner calls a value is valid JSON and
// compacts as json.Compact does, valid JSON within MaxDepth is never
// refused, and AppendCompact gives json.Compact's output and error.
func checkScan(t *testing.T, data []byte) {
	t.Helper()
	var compact bytes.Buffer
	compactErr := json.Compact(&compact, data)
	if end, spaced := scanValue(data, 0); end == len(data) {
		if compactErr != nil {
			t.Fatalf("scanner accepted invalid JSON (%v): %q", compactErr, data)
		}
		if spaced != !bytes.Equal(compact.Bytes(), data) {
			t.Fatalf("scanner says spaced=%v for %q, json.Compact gives %q", spaced, data, compact.Bytes())
		}
	} else if compactErr == nil && len(data) > 0 && !isSpace(data[0]) && !isSpace(data[len(data)-1]) &&
		bytes.Count(data, []byte("{"))+bytes.Count(data, []byte("[")) <= MaxDepth {
		t.Fatalf("scanner refused valid JSON %q (end %d of %d)", data, end, len(data))
	}
	got, err := AppendCompact([]byte("x"), data)
	if (err == nil) != (compactErr == nil) {
		t.Fatalf("AppendCompact error %v, json.Compact error %v, for %q", err, compactErr, data)
	}
	if err == nil && string(got) != "x"+compact.String() {
		t.Fatalf("AppendCompact(%q) = %q, want %q", data, got, "x"+compact.String())
	}
}

// scanCases are values where a hand-written scanner would most likely
// part ways with encoding/json.
var scanCases = []string{
	`{"a":[1,2.5e-3,"x\u00e9\n"],"b":null,"c":true}`,
	` { "a" : [ 1 , { } , [ ] ] } `, `{"a" : [1, 2]}`, "[ 1 ,\r2 ]",
	`{}`, ` {} `, `{`, `}`, ``, ` `, `[]`, `"x"`, `null`, `nul`, `tru`, `false`, `fals`,
	`01`, `-`, `-0`, `1.`, `1e`, `1E+2`, `-1.5e-7`, `2.5e3`, `1 2`,
	`[1,]`, `{"a":1,}`, `{"a" 1}`, `{"a"}`, `{,}`, `[}`, `{]`, `{"a":[}]}`,
	`"\x"`, `"\u12"`, `"\u00e9"`, `"\/\b\f\n\r\t\"\\"`, "\"a\tb\"", "\"\xff\"", "\"caf\xc3\xa9\"",
	`"unterminated`, `{"k\"":"v"}`, `{"<&>":"<&>"}`,
	strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
	strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
	strings.Repeat("[", MaxDepth) + "1" + strings.Repeat("]", MaxDepth),
	strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70),
	strings.Repeat("[", 1001) + strings.Repeat("]", 1001),
}

func TestScanAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range scanCases {
		checkScan(t, []byte(c))
	}
}

// FuzzScan checks the scanner and AppendCompact against encoding/json on
// arbitrary input (see checkScan).
func FuzzScan(f *testing.F) {
	for _, c := range scanCases {
		f.Add([]byte(c))
	}
	f.Fuzz(checkScan)
}

// TestAppendCompactFastPath checks that compact valid JSON is appended in
// one pass, without allocating beyond dst.
func TestAppendCompactFastPath(t *testing.T) {
	raw := []byte(`{"text":"hello, world","n":[1,2.5,true,null]}`)
	dst := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { _, _ = AppendCompact(dst, raw) }); n != 0 {
		t.Errorf("AppendCompact of compact JSON: %v allocations, want 0", n)
	}
}

// TestValidAgreesWithEncodingJSON holds Valid to json.Valid on the
// scanner's cases within MaxDepth (Valid refuses deeper nesting).
func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range scanCases {
		if strings.Count(in, "[")+strings.Count(in, "{") > MaxDepth {
			continue
		}
		if got, want := Valid([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Errorf("Valid(%q) = %v, json.Valid %v", in, got, want)
		}
	}
}
