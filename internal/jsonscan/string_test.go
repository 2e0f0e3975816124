package jsonscan

import (
	"encoding/json"
	"testing"
)

// checkAppendString checks AppendString against json.Marshal.
func checkAppendString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
		t.Fatalf("AppendString(%q) = %s, want x%s", s, got, want)
	}
}

var stringCases = []string{
	"", "plain", "provider/invoke", `a"b\c`, "tab\there\nnl\rcr", "\b\f", "\x00\x1f\x7f", "<b>&amp;</b>",
	"café", "\u2028\u2029", "a\u2028b\u2029c", "bad \xff utf8", "\xe2\x80", "\xed\xa0\x80", "😀", "\ufffd",
}

func TestAppendString(t *testing.T) {
	for _, s := range stringCases {
		checkAppendString(t, s)
	}
	dst := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { _ = AppendString(dst, "provider/invoke") }); n != 0 {
		t.Errorf("AppendString of plain ASCII: %v allocations, want 0", n)
	}
}

// FuzzAppendString checks AppendString against json.Marshal on arbitrary
// strings.
func FuzzAppendString(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(checkAppendString)
}
