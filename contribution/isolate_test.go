package contribution

import (
	"reflect"
	"testing"
)

// TestIsolate holds the isolation rule's table: who is left out, and when
// the build fails instead.
func TestIsolate(t *testing.T) {
	src := func(names ...string) []Source {
		var out []Source
		for _, n := range names {
			out = append(out, PluginSource(n, "1.0.0", OriginHandshake))
		}
		return out
	}
	conflict := func(msg string, names ...string) Problem {
		return Problem{Severity: Error, Code: CodeConflict, Sources: src(names...), Message: msg}
	}
	optional := func(name string) bool { return name != "core" } // "core" is required
	tests := []struct {
		name     string
		problems []Problem
		want     map[string]string
	}{
		{"two optional claimants", []Problem{conflict("slot s is claimed by both", "a", "b")},
			map[string]string{"a": "slot s is claimed by both", "b": "slot s is claimed by both"}},
		{"required against optional", []Problem{conflict("slot s is claimed by both", "core", "a")},
			map[string]string{"a": "slot s is claimed by both"}},
		{"two rules of one plugin", []Problem{conflict("one", "a", "b"), conflict("two", "a")},
			map[string]string{"a": "one; two", "b": "one"}},
		{"a required plugin's own violation fails the build", []Problem{conflict("one", "a"), conflict("two", "core")}, nil},
		{"the host spec fails the build", []Problem{{Severity: Error, Code: CodeHostSpec, Message: "bad point"}}, nil},
		{"slot_owners not claiming fails the build", []Problem{{Severity: Error, Code: CodeOwnerNotClaiming, Message: "owner"}}, nil},
		{"a host source is nobody to leave out", []Problem{{Severity: Error, Code: CodeDuplicate, Sources: []Source{HostSource()}, Message: "dup"}}, nil},
		{"warnings are ignored", []Problem{{Severity: Warning, Code: CodeUnknownTarget, Sources: src("a"), Message: "ignored"}},
			map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Isolate(tt.problems, optional); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Isolate = %q, want %q", got, tt.want)
			}
		})
	}
}
