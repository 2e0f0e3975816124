package kernel

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/pluginpkg"
)

// TestReloadKeepsPluginWithBrokenManifest: a running optional plugin whose
// manifest stops loading (a typo) is kept at its running version, its
// sidecar adopted, with a warning naming the file and the field; the plan
// predicts exactly that; disabling it then takes it out (issue 26 item 1).
func TestReloadKeepsPluginWithBrokenManifest(t *testing.T) {
	log := newSpawnLog(t)
	home, _ := reloadHome(t, log)
	k := startKernel(t, testConfig(home))
	ctx := context.Background()
	pid := pluginState(t, k, "bravo").PID
	spawned := len(log.pids(t))

	path := filepath.Join(home, "packages", "bravo", "plugin.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), `"version"`, `"versoin"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := k.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := change(t, plan, "bravo")
	wantWhy := `kept at its running version 1.0.0: its manifest no longer loads (packages/bravo/plugin.json: versoin: ` +
		`unknown field (did you mean "version"?); packages/bravo/plugin.json: version: required field is missing)`
	if c.Class != generation.ClassUnchanged || len(c.Reasons) != 1 || !strings.HasPrefix(c.Reasons[0], wantWhy) {
		t.Fatalf("plan: bravo is %s %q, want unchanged with %q...", c.Class, c.Reasons, wantWhy)
	}
	if !slices.ContainsFunc(plan.Warnings, func(w string) bool { return strings.HasPrefix(w, `plugin "bravo" is `+wantWhy) }) {
		t.Errorf("plan warnings %q, want one saying bravo is kept", plan.Warnings)
	}

	res, err := k.Reload(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := change(t, res.Plan, "bravo"); got.Class != c.Class || !slices.Equal(got.Reasons, c.Reasons) {
		t.Errorf("reload applied bravo as %s %q, the plan said %s %q", got.Class, got.Reasons, c.Class, c.Reasons)
	}
	g := k.Current()
	if m := g.Member("bravo"); m == nil || m.Status != generation.StatusRunning || !m.Adopted {
		t.Fatalf("bravo after the reload: %+v, want a running adopted member", m)
	}
	if got := pluginState(t, k, "bravo").PID; got != pid || len(log.pids(t)) != spawned {
		t.Errorf("bravo's pid %d -> %d, spawns %d -> %d: want its sidecar adopted, nothing started", pid, got, spawned, len(log.pids(t)))
	}
	if got := interceptorsAt(g, "tool.before"); !slices.Equal(got, []string{"alpha", "bravo"}) {
		t.Errorf("tool.before runs %q, want [alpha bravo]", got)
	}
	if !slices.ContainsFunc(g.Warnings(), func(w string) bool { return strings.HasPrefix(w, `plugin "bravo" is `+wantWhy) }) {
		t.Errorf("generation warnings %q, want one saying bravo is kept", g.Warnings())
	}
	if res, err := k.Reload(ctx); err != nil || res.Published {
		t.Errorf("a second reload with the same broken manifest: published %v, err %v; want nothing to do", res != nil && res.Published, err)
	}

	if err := pluginpkg.Disable(home, "bravo"); err != nil {
		t.Fatal(err)
	}
	res, err = k.Reload(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := change(t, res.Plan, "bravo"); c.Class != generation.ClassRemoved {
		t.Errorf("disabled bravo is %s, want removed", c.Class)
	}
	if k.Current().Member("bravo") != nil {
		t.Error("disabled bravo is still a member")
	}
}

func change(t *testing.T, p *generation.Plan, name string) generation.Change {
	t.Helper()
	for _, c := range p.Packages {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("plan has no change for %q: %+v", name, p.Packages)
	return generation.Change{}
}

func interceptorsAt(g *generation.Generation, point string) []string {
	var out []string
	for _, c := range g.Registry().Interceptors(contribution.Point(point)) {
		out = append(out, c.Source.Plugin)
	}
	return out
}

// TestReloadKeepsLazyPluginWithBrokenManifest: a lazy member, declared and
// not started, whose manifest stops loading is kept declared, and its
// first use starts it from the package value it was kept with.
func TestReloadKeepsLazyPluginWithBrokenManifest(t *testing.T) {
	pid := filepath.Join(t.TempDir(), "p.pid")
	home := writeHome(t, lazyPlug("solo", pid, "echo"))
	k := startLazyKernel(t, lazyConfig(home))
	if err := os.WriteFile(filepath.Join(home, "packages", "solo", "plugin.json"), []byte(`{"format": 1, "name": "solo"`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := k.Reload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c := change(t, res.Plan, "solo"); c.Class != generation.ClassUnchanged || c.Activation != "lazy" {
		t.Errorf("plan: solo is %s (activation %q), want unchanged and lazy", c.Class, c.Activation)
	}
	if m := k.Current().Member("solo"); m == nil || m.Status != generation.StatusDeclared {
		t.Fatalf("solo after the reload: %+v, want a declared member", m)
	}
	out, err := k.CallProvider(context.Background(), "plugin/solo/echo", []byte(`{"x":1}`))
	if err != nil || string(out) != `{"x":1}` {
		t.Fatalf("first call after the reload: %s, %v", out, err)
	}
	if n := spawns(t, pid); n != 1 {
		t.Errorf("%d starts, want 1 (on first use)", n)
	}
}
