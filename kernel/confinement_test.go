package kernel

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
)

// widenedHome is a home of two plugins: "plain", and "wide" whose
// manifest asks for a network address beyond the permissions the
// operator accepted (the minimal set, recorded in the state file).
func widenedHome(t *testing.T) string {
	t.Helper()
	home := writeHome(t, plug{name: "plain"}, plug{name: "wide"})
	m := manifest(plug{name: "wide"})
	m["permissions"] = map[string]any{"fs": map[string]any{"read": []string{"${package}"}, "write": []string{"${data}"}},
		"net": map[string]any{"connect": []string{"api.example.com:443"}}}
	writeJSON(t, filepath.Join(home, "packages", "wide", "plugin.json"), m)
	writeJSON(t, filepath.Join(home, "state.json"), map[string]any{"format": 1, "packages": map[string]any{
		"wide": map[string]any{"enabled": true, "accepted_permissions": map[string]any{
			"fs": map[string]any{"read": []string{"${package}"}, "write": []string{"${data}", "${tmp}"}}}}}})
	return home
}

const widenedReason = "left out of the generation: permissions widened: + net.connect api.example.com:443 (not accepted by the operator)"

// TestWidenedNotStarted: under confinement, a package whose manifest asks
// for more than the operator accepted is not started: an optional one is
// a failed member with a warning, a required one fails the build; with
// confinement off it runs. Plugins reports the confinement each running
// plugin got.
func TestWidenedNotStarted(t *testing.T) {
	home := widenedHome(t)
	cfg := testConfig(home)
	cfg.Confinement = config.Confinement{Packages: map[string]string{"wide": pluginpkg.ConfineBestEffort}}
	k := startKernel(t, cfg)
	g := k.Current()
	if m := g.Member("wide"); m.Status != generation.StatusFailed || m.Reason != widenedReason {
		t.Errorf("wide: %s, %q", m.Status, m.Reason)
	}
	if c := clientNamed(k, "wide"); c != nil {
		t.Errorf("wide was started (pid %d)", c.PID())
	}
	if want := `optional plugin "wide" is ` + widenedReason; !slices.Contains(g.Warnings(), want) {
		t.Errorf("warnings %q lack %q", g.Warnings(), want)
	}
	for _, p := range k.Plugins() {
		switch p.Name {
		case "plain":
			if p.State != observe.StateReady || p.PID == 0 || p.Confinement == nil || p.Confinement.Mode != pluginpkg.ConfineOff {
				t.Errorf("plain: %+v", p)
			}
		case "wide":
			if p.State != observe.StateFailed || p.PID != 0 || p.Confinement != nil || p.Reason != widenedReason {
				t.Errorf("wide: %+v", p)
			}
		}
	}

	cfg.Policy = map[string]config.FailurePolicy{"wide": config.FailureRequired}
	k2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer k2.Close(context.Background())
	err = k2.Start(context.Background())
	var ue *generation.UnavailableError
	var we *pluginpkg.PermissionsWidenedError
	if !errors.As(err, &ue) || !errors.As(ue, &we) || !reflect.DeepEqual(we.Added, []string{"net.connect api.example.com:443"}) ||
		!strings.Contains(err.Error(), `required plugin "wide" failed: `+widenedReason) {
		t.Errorf("Start with wide required: %v", err)
	}

	if _, err := pluginpkg.AcceptPermissions(home, "wide"); err != nil {
		t.Fatal(err)
	}
	p, err := k.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, "permissions widened") {
			t.Errorf("accepted, but the plan still warns: %s", w)
		}
	}
}

// TestWidenedRunsUnconfined: with confinement off for it, a package asking
// for more than was accepted runs (nothing would enforce the permissions
// either way).
func TestWidenedRunsUnconfined(t *testing.T) {
	k := startKernel(t, testConfig(widenedHome(t)))
	if m := k.Current().Member("wide"); m.Status != generation.StatusRunning {
		t.Errorf("wide: %s, %q", m.Status, m.Reason)
	}
}

// TestPlanConfinement plans a package's confinement with the options the
// kernel would start it with: its data directory under the data root.
func TestPlanConfinement(t *testing.T) {
	home := widenedHome(t)
	cfg := testConfig(home)
	cfg.Confinement = config.Confinement{Default: pluginpkg.ConfineBestEffort,
		Grants: map[string]*pluginpkg.Permissions{"wide": {Connect: []string{"*:443"}}}}
	inst, err := pluginpkg.LoadInstalled(home)
	if err != nil {
		t.Fatal(err)
	}
	r, err := PlanConfinement(cfg, inst.Packages[1])
	if err != nil {
		t.Fatal(err)
	}
	want := &pluginpkg.Permissions{Read: []string{filepath.Join(inst.Packages[1].Dir)},
		Write: []string{filepath.Join(home, "data", "wide")}, Connect: []string{"*:443", "api.example.com:443"}}
	if r.Mode != pluginpkg.ConfineBestEffort || !reflect.DeepEqual(r.Effective, want) ||
		!reflect.DeepEqual(r.Granted, &pluginpkg.Permissions{Connect: []string{"*:443"}}) {
		t.Errorf("report %+v, effective %+v", r, r.Effective)
	}
	cfg.Confinement.Default = ""
	if r, err := PlanConfinement(cfg, inst.Packages[0]); err != nil || r.Mode != pluginpkg.ConfineOff {
		t.Errorf("off: %+v, %v", r, err)
	}
}
