package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/pluginpkg"
)

// Ways a package can become unavailable in a home.
func breakManifest(t *testing.T, home, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(home, "packages", name, "plugin.json"), []byte(`{"format": 1,`), 0o644); err != nil {
		t.Fatal(err)
	}
}

func removePackage(t *testing.T, home, name string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(home, "packages", name)); err != nil {
		t.Fatal(err)
	}
}

func disablePackage(t *testing.T, home, name string) {
	t.Helper()
	if err := pluginpkg.Disable(home, name); err != nil {
		t.Fatal(err)
	}
}

// wantUnavailable checks that err is a *generation.BuildError carrying an
// *generation.UnavailableError for p1 whose message contains want.
func wantUnavailable(t *testing.T, err error, want string) {
	t.Helper()
	var be *generation.BuildError
	var ue *generation.UnavailableError
	if !errors.As(err, &be) || !errors.As(err, &ue) || ue.Package != "p1" {
		t.Fatalf("err = %v, want a *generation.BuildError with an *generation.UnavailableError for p1", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant it to contain %q", err, want)
	}
}

func TestRequiredPackageUnavailableFailsStart(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(t *testing.T, home, name string)
		want  string
	}{
		{"manifest does not parse", breakManifest, `required package "p1": packages/p1/plugin.json: `},
		{"directory missing", removePackage, `required package "p1": packages/p1: not installed`},
		{"disabled by the operator", disablePackage, `required package "p1": state.json: disabled by the operator`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := writeHome(t, plug{name: "p1", env: map[string]string{"SCRIPT_PROVIDERS": "get"}}, plug{name: "other"})
			tt.spoil(t, home, "p1")
			cfg := testConfig(home)
			cfg.Policy = map[string]config.FailurePolicy{"p1": config.FailureRequired}
			k, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = k.Start(context.Background())
			wantUnavailable(t, err, tt.want)
			if !strings.Contains(err.Error(), "the host config requires it") {
				t.Errorf("err = %v, want it to say who requires p1", err)
			}
			if k.Current() != nil {
				t.Error("a generation was published")
			}
			if err := k.Close(context.Background()); err != nil {
				t.Error(err)
			}
			noChildren(t)
		})
	}
}

// A package required only by its own manifest may be disabled: the
// operator's explicit choice is honoured at Start.
func TestManifestRequiredDisabledIsLeftOut(t *testing.T) {
	k := startKernel(t, testConfig(writeHome(t, plug{name: "p1", required: true, disabled: true}, plug{name: "other"})))
	if k.Current().Member("p1") != nil {
		t.Error("a disabled package is a member")
	}
}

func TestRequiredPackageUnavailableRollsBackReload(t *testing.T) {
	const fromManifest = "generation 1 runs it as required"
	tests := []struct {
		name     string
		required bool                 // by its manifest
		policy   config.FailurePolicy // config
		spoil    func(t *testing.T, home, name string)
		want     string // "" when the reload must succeed without p1
	}{
		{"config: manifest breaks", false, config.FailureRequired, breakManifest, `packages/p1/plugin.json: `},
		{"config: directory vanishes", false, config.FailureRequired, removePackage, `packages/p1: not installed`},
		{"config: disabled", false, config.FailureRequired, disablePackage, `state.json: disabled by the operator`},
		{"manifest: manifest breaks", true, config.FailureDefault, breakManifest, fromManifest},
		{"manifest: directory vanishes", true, config.FailureDefault, removePackage, fromManifest},
		{"manifest: disabled is honoured", true, config.FailureDefault, disablePackage, ""},
		{"config optional overrides the manifest", true, config.FailureOptional, removePackage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := writeHome(t, plug{name: "p1", required: tt.required, env: map[string]string{"SCRIPT_PROVIDERS": "get"}},
				plug{name: "other"})
			cfg := testConfig(home)
			cfg.Policy = map[string]config.FailurePolicy{"p1": tt.policy}
			k := startKernel(t, cfg)
			g1 := k.Current()
			pid := clientNamed(k, "p1").PID()
			tt.spoil(t, home, "p1")
			res, err := k.Reload(context.Background())
			if tt.want == "" {
				if err != nil || !res.Published || k.Current().Member("p1") != nil {
					t.Fatalf("Reload = %+v, %v; want a generation without p1", res, err)
				}
				return
			}
			wantUnavailable(t, err, `required package "p1": `)
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tt.want)
			}
			if k.Current() != g1 {
				t.Fatal("a failed reload replaced the current generation")
			}
			out, err := k.CallProvider(context.Background(), "plugin/p1/get", json.RawMessage(`"still here"`))
			if err != nil || string(out) != `"still here"` {
				t.Errorf("call to p1 after the rollback: %s, %v", out, err)
			}
			if c := clientNamed(k, "p1"); c.PID() != pid || !alive(pid) {
				t.Error("p1's sidecar was replaced or stopped")
			}
			if plan, err := k.Plan(context.Background()); err != nil || !strings.Contains(strings.Join(plan.Problems, "\n"), tt.want) {
				t.Errorf("Plan problems = %v, %v; want one containing %q", plan.Problems, err, tt.want)
			}
		})
	}
}
