package contribution

import (
	"errors"
	"strings"
	"testing"
)

func TestUnknownTarget(t *testing.T) {
	const (
		point = `"audit" (handshake) contributes interceptor to point "tool.unknown", which the host does not declare; it is ignored (declared points: tool.before, tool.after, prompt.submit)`
		slot  = `"memory" (manifest) contributes strategy to slot "no.such", which the host does not declare; it is ignored (declared slots: context.compactor, memory.store)`
	)
	in := []Contribution{
		NewInterceptor(hs("audit"), "tool.unknown", 0, 0),
		NewStrategy(ms("memory"), "no.such", 0),
		NewInterceptor(hs("audit"), "tool.before", 0, 1),
	}
	t.Run("lenient: warnings, dropped", func(t *testing.T) {
		r := mustBuild(t, testHost(), in...)
		equal(t, "Warnings", render(r.Warnings()), []string{
			"warning unknown-target: " + point,
			"warning unknown-target: " + slot,
		})
		equal(t, "All", names(r.All()), []string{"audit:0:1"})
		if got := r.Interceptors("tool.unknown"); got != nil {
			t.Errorf("Interceptors(unknown) = %v, want nil", got)
		}
	})
	t.Run("strict: errors", func(t *testing.T) {
		spec := testHost()
		spec.Strict = true
		_, err := tryBuild(t, spec, in...)
		equal(t, "problems", problemsOf(t, err), []string{
			"error unknown-target: " + point,
			"error unknown-target: " + slot,
		})
	})
}

func TestDuplicateUnique(t *testing.T) {
	search := Provider{Ref: "search.web", Description: "web search"}
	tests := []struct {
		name string
		in   []Contribution
		want []string
	}{
		{
			name: "provider declared in manifest and handshake",
			in:   []Contribution{NewProvider(hs("memory"), search, 0), NewProvider(ms("memory"), search, 0)},
			want: []string{`error duplicate: provider "plugin/memory/search.web" is declared by both "memory" (handshake) and "memory" (manifest); each provider ID may be declared once`},
		},
		{
			name: "action declared in manifest and handshake",
			in: []Contribution{
				NewAction(hs("zed"), Action{ID: "panel.open", Title: "Open"}, 0),
				NewAction(ms("zed"), Action{ID: "panel.open", Title: "Open panel"}, 3),
			},
			want: []string{`error duplicate: UI action "plugin/zed/panel.open" is declared by both "zed" (handshake) and "zed" (manifest); each action ID may be declared once`},
		},
		{
			name: "same action ID from two plugins is no duplicate",
			in: []Contribution{
				NewAction(hs("zed"), Action{ID: "panel.open", Title: "Open"}, 0),
				NewAction(hs("alpha"), Action{ID: "panel.open", Title: "Open panel"}, 3),
			},
		},
		{
			name: "same ref from two plugins is no duplicate",
			in:   []Contribution{NewProvider(hs("a"), search, 0), NewProvider(hs("b"), search, 0)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tryBuild(t, testHost(), tt.in...)
			if tt.want != nil {
				equal(t, "problems", problemsOf(t, err), tt.want)
				return
			}
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			for _, c := range tt.in {
				if got := r.Get(c.Kind, c.Key); len(got) != 1 || got[0].Source != c.Source {
					t.Errorf("Get(%s, %q) = %v, want %s's", c.Kind, c.Key, got, c.Source)
				}
			}
		})
	}
}

func TestInvalidContribution(t *testing.T) {
	const at = `interceptor at point "tool.before" from "a" (handshake), declaration 0: `
	tests := []struct {
		name string
		c    Contribution
		want []string
	}{
		{"empty plugin name", NewInterceptor(PluginSource("", "1.0.0", OriginHandshake), "tool.before", 0, 0),
			[]string{`error invalid: interceptor at point "tool.before" from a plugin with no name, declaration 0: source.plugin: must not be empty for a plugin contribution`}},
		{"plugin name with slash", NewInterceptor(hs("a/b"), "tool.before", 0, 0),
			[]string{`error invalid: interceptor at point "tool.before" from "a/b" (handshake), declaration 0: source.plugin: "a/b" must not contain '/' or whitespace`}},
		{"bad origin", NewInterceptor(PluginSource("a", "1", "config"), "tool.before", 0, 0),
			[]string{`error invalid: interceptor at point "tool.before" from "a" (config), declaration 0: source.origin: "config" is neither "manifest" nor "handshake"`}},
		{"zero scope", NewInterceptor(Source{Plugin: "a"}, "tool.before", 0, 0),
			[]string{`error invalid: interceptor at point "tool.before" from an unknown scope, declaration 0: source.scope: Scope(0) is neither ScopeHost nor ScopePlugin`}},
		{"host with plugin name", NewInterceptor(Source{Scope: ScopeHost, Plugin: "x"}, "tool.before", 0, 0),
			[]string{`error invalid: interceptor at point "tool.before" from the host, declaration 0: source.plugin: must be empty for a host contribution, got "x"`}},
		{"bad point grammar", NewInterceptor(hs("a"), "Tool.Before", 0, 0),
			[]string{`error invalid: interceptor at point "Tool.Before" from "a" (handshake), declaration 0: key: "Tool.Before" is not a valid point: segment 1 ("Tool") contains an upper-case letter (identifiers are lower-case)`}},
		{"payload of wrong type", Contribution{Kind: KindInterceptor, Key: "tool.before", Source: hs("a"), Payload: &Interceptor{Point: "tool.before"}},
			[]string{"error invalid: " + at + "payload: is *contribution.Interceptor, want contribution.Interceptor"}},
		{"key does not match payload", Contribution{Kind: KindInterceptor, Key: "tool.before", Source: hs("a"), Payload: Interceptor{Point: "tool.after"}},
			[]string{"error invalid: " + at + `key: "tool.before" does not match the payload's point "tool.after"`}},
		{"several problems at once", NewInterceptor(PluginSource("a", "", "x"), "tool.before", 2000, 0),
			[]string{
				`error invalid: interceptor at point "tool.before" from "a" (x), declaration 0: priority: 2000 is outside -1000..1000 (higher runs first)`,
				`error invalid: interceptor at point "tool.before" from "a" (x), declaration 0: source.origin: "x" is neither "manifest" nor "handshake"`,
			}},
		{"bad provider ref", NewProvider(hs("a"), Provider{Ref: "Search Web"}, 0),
			[]string{`error invalid: provider "plugin/a/Search Web" from "a" (handshake), declaration 0: payload.ref: "Search Web" is not a valid provider ref: segment 1 ("Search Web") contains an upper-case letter (identifiers are lower-case)`}},
		{"provider key not namespaced", Contribution{Kind: KindProvider, Key: "search", Source: hs("a"), Payload: Provider{Ref: "search"}},
			[]string{`error invalid: provider "search" from "a" (handshake), declaration 0: key: "search" does not match the payload's namespaced ID "plugin/a/search"`}},
		{"bad action ID", NewAction(hs("a"), Action{ID: "open/panel", Title: "Open"}, 0),
			[]string{`error invalid: UI action "plugin/a/open/panel" from "a" (handshake), declaration 0: payload.id: "open/panel" is not a valid action ID: segment 1 ("open/panel") contains '/' (allowed: a-z, 0-9, '_', '-')`}},
		{"action key not namespaced", Contribution{Kind: KindAction, Key: "open", Source: hs("a"), Payload: Action{ID: "open", Title: "Open"}},
			[]string{`error invalid: UI action "open" from "a" (handshake), declaration 0: key: "open" does not match the payload's namespaced ID "plugin/a/open"`}},
		{"empty action title", NewAction(hs("a"), Action{ID: "open", Title: " "}, 0),
			[]string{`error invalid: UI action "plugin/a/open" from "a" (handshake), declaration 0: payload.title: must not be empty`}},
		{"empty kind", Contribution{Key: "x", Source: hs("a")},
			[]string{`error invalid: declaration 0 from "a" (handshake): kind: must not be empty`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tryBuild(t, testHost(), tt.c)
			equal(t, "problems", problemsOf(t, err), tt.want)
		})
	}
}

// TestBuildReportsEveryProblem builds once with many problems and expects
// all of them, errors first.
func TestBuildReportsEveryProblem(t *testing.T) {
	spec := testHost()
	spec.Points = append(spec.Points, "Bad Point")
	spec.SlotOwners = map[Slot]string{"memory.store": "ghost"}
	_, err := tryBuild(t, spec,
		NewInterceptor(hs("audit"), "tool.before", 5000, 0),
		NewInterceptor(hs("audit"), "tool.nowhere", 0, 1),
		NewStrategy(hs("memory"), "context.compactor", 0),
		NewStrategy(hs("summarizer"), "context.compactor", 0),
		NewProvider(hs("memory"), Provider{Ref: "kv"}, 1),
		NewProvider(hs("memory"), Provider{Ref: "kv"}, 2),
		NewAction(hs("ui"), Action{ID: "open", Title: "Open"}, 0),
		NewAction(hs("ui"), Action{ID: "open", Title: "Open"}, 1),
		NewAction(PluginSource("", "", OriginHandshake), Action{ID: "x", Title: "X"}, 0),
	)
	equal(t, "problems", problemsOf(t, err), []string{
		`error host-spec: host spec: points[3]: "Bad Point" is not a valid point: segment 1 ("Bad Point") contains an upper-case letter (identifiers are lower-case)`,
		`error invalid: UI action "plugin//x" from a plugin with no name, declaration 0: source.plugin: must not be empty for a plugin contribution`,
		`error duplicate: UI action "plugin/ui/open" is declared by both "ui" (handshake) and "ui" (handshake); each action ID may be declared once`,
		`error invalid: interceptor at point "tool.before" from "audit" (handshake), declaration 0: priority: 5000 is outside -1000..1000 (higher runs first)`,
		`error duplicate: provider "plugin/memory/kv" is declared by both "memory" (handshake) and "memory" (handshake); each provider ID may be declared once`,
		`error conflict: slot "context.compactor" is claimed by both "memory" (handshake) and "summarizer" (handshake); name its owner in the host config's slot_owners`,
		`warning unknown-target: "audit" (handshake) contributes interceptor to point "tool.nowhere", which the host does not declare; it is ignored (declared points: tool.before, tool.after, prompt.submit)`,
		`warning owner-not-claiming: slot "memory.store": the host config's slot_owners names "ghost" as owner, but "ghost" does not claim it; no plugin claims it, so the host's default runs`,
	})
	var be *RegistryError
	_ = errors.As(err, &be)
	if got := be.Error(); !strings.HasPrefix(got, "contribution registry: 6 errors, 2 warnings\n\terror: host spec: points[3]") {
		t.Errorf("Error() = %q", got)
	}
}

// TestNamespacedIs: checking a namespaced ID in place agrees with
// building it (providerKey and actionKey build the same shape).
func TestNamespacedIs(t *testing.T) {
	host, plug := Source{Scope: ScopeHost}, Source{Scope: ScopePlugin, Plugin: "p-1"}
	odd := Source{Scope: ScopePlugin, Plugin: "a/b"}
	for _, tc := range []struct {
		id    string
		src   Source
		local string
	}{
		{"plugin/p-1/echo", plug, "echo"}, {"plugin/p-1/echo", plug, "ech"}, {"plugin/p-1/echo", plug, "echo2"},
		{"plugin/p-1/", plug, ""}, {"plugin/p-1", plug, ""}, {"plugin/p-2/echo", plug, "echo"},
		{"plugin/p-1echo", plug, "echo"}, {"plugin/p-1//echo", plug, "/echo"}, {"plugin//echo", Source{Scope: ScopePlugin}, "echo"},
		{"host/echo", host, "echo"}, {"host/echo", plug, "echo"}, {"plugin/p-1/echo", host, "echo"}, {"host/", host, ""},
		{"plugin/a/b/c", odd, "c"}, {"plugin/a/b/c", Source{Scope: ScopePlugin, Plugin: "a"}, "b/c"}, {"", plug, ""},
	} {
		for name, key := range map[string]func(Source, string) string{"provider": providerKey, "action": actionKey} {
			if got, want := namespacedIs(tc.id, tc.src, tc.local), tc.id == key(tc.src, tc.local); got != want {
				t.Errorf("%s: namespacedIs(%q, %+v, %q) = %v, building it says %v", name, tc.id, tc.src, tc.local, got, want)
			}
		}
	}
}
