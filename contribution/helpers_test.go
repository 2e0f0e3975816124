package contribution

import (
	"errors"
	"fmt"
	"testing"
)

// hs is a handshake source for plugin name.
func hs(name string) Source { return PluginSource(name, "1.0.0", OriginHandshake) }

// ms is a manifest source for plugin name.
func ms(name string) Source { return PluginSource(name, "1.0.0", OriginManifest) }

// testHost declares the points and slots the tests use.
func testHost() HostSpec {
	return HostSpec{
		Points: []Point{"tool.before", "tool.after", "prompt.submit"},
		Slots:  []Slot{"context.compactor", "memory.store"},
	}
}

func tryBuild(t *testing.T, spec HostSpec, cs ...Contribution) (*Registry, error) {
	t.Helper()
	b := NewBuilder(spec)
	b.Add(cs...)
	return b.Build()
}

func mustBuild(t *testing.T, spec HostSpec, cs ...Contribution) *Registry {
	t.Helper()
	r, err := tryBuild(t, spec, cs...)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return r
}

// problemsOf returns the problems of a failed build as "severity code: message".
func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	var be *RegistryError
	if !errors.As(err, &be) {
		t.Fatalf("Build error = %v, want *RegistryError", err)
	}
	return render(be.Problems)
}

func render(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = fmt.Sprintf("%s %s: %s", p.Severity, p.Code, p.Message)
	}
	return out
}

// names renders contributions as "plugin:priority:seq" ("host" for the host).
func names(cs []Contribution) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		who := c.Source.Plugin
		if c.Source.Scope == ScopeHost {
			who = "host"
		}
		out[i] = fmt.Sprintf("%s:%d:%d", who, c.Priority, c.Seq)
	}
	return out
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d entries, want %d\ngot:  %q\nwant: %q", what, len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s[%d]:\ngot:  %s\nwant: %s", what, i, got[i], want[i])
		}
	}
}
