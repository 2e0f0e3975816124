package inputschema

import (
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/inputcheck"
)

// TestRegisteredValidator checks the validator this package registers:
// what it refuses, where, and that a schema may refer only to itself.
func TestRegisteredValidator(t *testing.T) {
	compile := inputcheck.Lookup()
	if compile == nil {
		t.Fatal("no validator registered")
	}
	s, err := compile(`{"type": "object", "required": ["q"], "properties": {"limit": {"type": "integer", "maximum": 100}}}`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		input   string
		pointer string
		msg     string // a part of the message; "" means accepted
	}{
		{`{"q": "x", "limit": 5}`, "", ""},
		{`{"q": "x", "limit": 500}`, "/limit", "maximum"},
		{`{"limit": 5}`, "", "missing property 'q'"},
		{`null`, "", "got null"},
		{`{"q": `, "", "not valid JSON"},
	}
	for _, tt := range tests {
		r := s.Check([]byte(tt.input))
		switch {
		case tt.msg == "" && r != nil:
			t.Errorf("Check(%s) = %+v, want accepted", tt.input, *r)
		case tt.msg != "" && r == nil:
			t.Errorf("Check(%s) accepted, want refused at %q", tt.input, tt.pointer)
		case tt.msg != "" && (r.Pointer != tt.pointer || !strings.Contains(r.Message, tt.msg)):
			t.Errorf("Check(%s) = %+v, want at %q a message with %q", tt.input, *r, tt.pointer, tt.msg)
		}
	}
	for _, bad := range []string{`{"$ref": "file:///etc/passwd"}`, `{"$ref": "https://example.com/s.json"}`, `{"type": "objec"}`, `{`} {
		if _, err := compile(bad); err == nil {
			t.Errorf("compile(%s) succeeded, want an error", bad)
		}
	}
}
