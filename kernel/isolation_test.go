package kernel

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/proctest"
)

// claimant is an optional scripted plugin claiming context.compactor.
func claimant(name string, required bool) plug {
	return plug{name: name, required: required, replaces: []string{"context.compactor"},
		env: map[string]string{"SCRIPT_SLOTS": "context.compactor"}}
}

// TestOptionalPluginIsolation starts homes of real plugins where optional
// plugins break a contribution rule: each one is left out with a warning
// naming it, the rule and the other party; its sidecar is stopped; plugins
// requiring it are left out along; the rest of the generation is published.
func TestOptionalPluginIsolation(t *testing.T) {
	healthy := plug{name: "healthy", intercepts: []string{"tool.before"},
		env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=modify", "SCRIPT_PROVIDERS": "get"}}
	tests := []struct {
		name    string
		plugs   []plug
		running []string
		leftOut map[string][]string // plugin -> substrings of its warning
		owner   string              // context.compactor's owner; "" = host default
	}{
		{
			name:    "bad provider ref",
			plugs:   []plug{healthy, {name: "badref", env: map[string]string{"SCRIPT_PROVIDERS": "Search Web"}}},
			running: []string{"healthy"},
			leftOut: map[string][]string{"badref": {`optional plugin "badref" is left out of the generation: `,
				`provider "plugin/badref/Search Web" from "badref" (handshake)`, `"Search Web" is not a valid provider ref`}},
		},
		{
			name:    "bad action ID",
			plugs:   []plug{healthy, {name: "badaction", env: map[string]string{"SCRIPT_ACTIONS": "Open!"}}},
			running: []string{"healthy"},
			leftOut: map[string][]string{"badaction": {`optional plugin "badaction" is left out of the generation: `,
				`"badaction" (handshake)`, `"Open!" is not a valid action ID`}},
		},
		{
			name:    "slot conflict between two optional plugins",
			plugs:   []plug{healthy, claimant("alpha", false), claimant("beta", false)},
			running: []string{"healthy"},
			leftOut: map[string][]string{
				"alpha": {`optional plugin "alpha" is left out of the generation: slot "context.compactor" is claimed by both "alpha" (handshake) and "beta" (handshake)`},
				"beta":  {`optional plugin "beta" is left out of the generation: slot "context.compactor" is claimed by both "alpha" (handshake) and "beta" (handshake)`},
			},
		},
		{
			name:    "required against optional",
			plugs:   []plug{healthy, claimant("alpha", true), claimant("beta", false)},
			running: []string{"alpha", "healthy"},
			leftOut: map[string][]string{
				"beta": {`optional plugin "beta" is left out of the generation: slot "context.compactor" is claimed by both "alpha" (handshake) and "beta" (handshake)`},
			},
			owner: "alpha",
		},
		{
			name:    "declaration the manifest does not authorize",
			plugs:   []plug{healthy, {name: "rogue", env: map[string]string{"SCRIPT_SLOTS": "context.compactor"}}},
			running: []string{"healthy"},
			leftOut: map[string][]string{"rogue": {`optional plugin "rogue" failed: `,
				`strategies[0]: slot "context.compactor" is not listed in runtime.replaces`}},
		},
		{
			name: "method mapped to an undeclared provider",
			plugs: []plug{healthy,
				{name: "kv", provides: []string{"storage.kv@1.0.0"}, env: map[string]string{"SCRIPT_PROVIDERS": "kv.get"},
					methods: map[string]map[string]string{"storage.kv": {"get": "kv.get", "put": "kv.put"}}},
				{name: "user", requires: []string{"storage.kv ^1.0"}}},
			running: []string{"healthy"},
			leftOut: map[string][]string{
				"kv":   {`optional plugin "kv" is left out of the generation: method "put" of capability "storage.kv" is mapped to provider "kv.put", which its handshake does not declare`},
				"user": {`optional plugin "user" failed: requires storage.kv ^1.0, provided by "kv", which failed: left out of the generation: method "put"`},
			},
		},
		{
			name: "cascade along requires",
			plugs: []plug{healthy,
				{name: "store", provides: []string{"storage.kv@1.0.0"}, env: map[string]string{"SCRIPT_PROVIDERS": "Bad"}},
				{name: "user", requires: []string{"storage.kv ^1.0"}}},
			running: []string{"healthy"},
			leftOut: map[string][]string{
				"store": {`optional plugin "store" is left out of the generation: `, `"Bad" is not a valid provider ref`},
				"user":  {`optional plugin "user" failed: requires storage.kv ^1.0, provided by "store", which failed: left out of the generation: `},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := startKernel(t, testConfig(writeHome(t, tt.plugs...)))
			g := k.Current()
			var running []string
			for _, m := range g.Members() {
				if m.Status == generation.StatusRunning {
					running = append(running, m.Package.Name)
				}
			}
			if !slices.Equal(running, tt.running) {
				t.Errorf("running = %v, want %v", running, tt.running)
			}
			warnings := strings.Join(g.Warnings(), "\n")
			for name, wants := range tt.leftOut {
				if m := g.Member(name); m.Status != generation.StatusFailed || clientNamed(k, name) != nil {
					t.Errorf("%s: status %s, client %v; want failed without a client", name, m.Status, clientNamed(k, name))
				}
				for _, w := range wants {
					if !strings.Contains(warnings, w) {
						t.Errorf("warnings lack %q:\n%s", w, warnings)
					}
				}
			}
			if kids, ok := proctest.Children(os.Getpid()); ok && len(kids) != len(tt.running) {
				t.Errorf("%d plugin processes run, want %d (one per running member)", len(kids), len(tt.running))
			}
			res, err := k.Intercept(context.Background(), "tool.before", []byte(`[]`))
			if err != nil || chainOf(res) != "healthy:modify" {
				t.Errorf("Intercept = %+v, %v; want healthy's interceptor", res, err)
			}
			owner, ok := g.Registry().SlotOwner("context.compactor")
			if got := owner.Source.Plugin; ok != (tt.owner != "") || got != tt.owner {
				t.Errorf("slot owner = %q (%v), want %q", got, ok, tt.owner)
			}
		})
	}
}

// TestRequiredViolationsFailTheBuild: a required plugin's own violation, and
// a conflict between two required plugins, still fail the build, naming the
// plugins; nothing is left running.
func TestRequiredViolationsFailTheBuild(t *testing.T) {
	tests := []struct {
		name  string
		plugs []plug
		want  []string
	}{
		{"bad provider ref", []plug{{name: "badref", required: true, env: map[string]string{"SCRIPT_PROVIDERS": "Bad"}}},
			[]string{`"badref" (handshake)`, `"Bad" is not a valid provider ref`}},
		{"two required claimants", []plug{claimant("alpha", true), claimant("beta", true), claimant("gamma", false)},
			[]string{`slot "context.compactor" is claimed by both "alpha" (handshake) and "beta" (handshake)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := New(testConfig(writeHome(t, tt.plugs...)))
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close(context.Background())
			err = k.Start(context.Background())
			var cbe *contribution.RegistryError
			if !errors.As(err, &cbe) {
				t.Fatalf("Start = %v, want a *contribution.BuildError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if k.Current() != nil {
				t.Error("a failed Start published a generation")
			}
			noChildren(t)
		})
	}
}

// TestUndeclaredMethodFailsRequired: a required plugin whose manifest maps
// a method to a provider its handshake does not declare fails the build,
// naming the plugin, the capability, the method and the ref.
func TestUndeclaredMethodFailsRequired(t *testing.T) {
	kv := plug{name: "kv", required: true, provides: []string{"storage.kv@1.0.0"}, env: map[string]string{"SCRIPT_PROVIDERS": "kv.get"},
		methods: map[string]map[string]string{"storage.kv": {"get": "kv.get", "put": "kv.put"}}}
	k, err := New(testConfig(writeHome(t, kv)))
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(context.Background())
	err = k.Start(context.Background())
	var be *generation.BuildError
	if !errors.As(err, &be) {
		t.Fatalf("Start = %v, want a *generation.BuildError", err)
	}
	want := []string{`required plugin "kv" failed: method "put" of capability "storage.kv" is mapped to provider "kv.put", which its handshake does not declare`}
	if !slices.Equal(be.Problems, want) {
		t.Errorf("problems = %q, want %q", be.Problems, want)
	}
	if k.Current() != nil {
		t.Error("a failed Start published a generation")
	}
	noChildren(t)
}
