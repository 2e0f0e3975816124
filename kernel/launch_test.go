package kernel

import (
	"encoding/json"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/pluginpkg"
)

// TestIsDefaultLaunch: a launch value is default exactly when it is what
// generation.Inputs.LaunchOf gives a package without an entry, so
// launches may leave it out: the member's policy, activation and
// fingerprint are the same.
func TestIsDefaultLaunch(t *testing.T) {
	v := semver.MustParse("1.0.0")
	pkg := func(required bool, activation string) *pluginpkg.Package {
		return &pluginpkg.Package{Name: "p", Manifest: &pluginpkg.Manifest{Name: "p", Version: v,
			Runtime: &pluginpkg.Runtime{Command: "./p", Required: required, Activation: activation}}}
	}
	declarative := &pluginpkg.Package{Name: "d", Manifest: &pluginpkg.Manifest{Name: "d", Version: v}}
	lazy := pluginpkg.ActivationLazy
	for _, tc := range []struct {
		name string
		p    *pluginpkg.Package
		l    generation.Launch
		want bool
	}{
		{"empty, eager manifest", pkg(false, ""), generation.Launch{}, true},
		{"eager spelled out", pkg(false, ""), generation.Launch{Activation: pluginpkg.ActivationEager}, true},
		{"manifest says eager, launch empty", pkg(false, pluginpkg.ActivationEager), generation.Launch{}, true},
		{"lazy as the manifest says", pkg(true, lazy), generation.Launch{Required: true, Activation: lazy}, true},
		{"declarative", declarative, generation.Launch{Activation: pluginpkg.ActivationEager}, true},
		{"lazy over an eager manifest", pkg(false, ""), generation.Launch{Activation: lazy}, false},
		{"eager over a lazy manifest", pkg(false, lazy), generation.Launch{Activation: pluginpkg.ActivationEager}, false},
		{"required over the manifest", pkg(false, ""), generation.Launch{Required: true}, false},
		{"optional over the manifest", pkg(true, ""), generation.Launch{}, false},
		{"required declarative", declarative, generation.Launch{Required: true}, false},
		{"config", pkg(false, ""), generation.Launch{Config: json.RawMessage(`{}`)}, false},
		{"env", pkg(false, ""), generation.Launch{Env: map[string]string{"A": "1"}}, false},
		{"secret names", pkg(false, ""), generation.Launch{SecretEnv: []string{"A"}}, false},
		{"limits", pkg(false, ""), generation.Launch{Limits: pluginpkg.ResourceLimits{QueueBytes: 1}}, false},
		{"confinement mode", pkg(false, ""), generation.Launch{Confinement: pluginpkg.Confinement{Mode: pluginpkg.ConfineOff}}, false},
		{"grants", pkg(false, ""), generation.Launch{Confinement: pluginpkg.Confinement{Grants: &pluginpkg.Permissions{}}}, false},
		{"denies", pkg(false, ""), generation.Launch{Confinement: pluginpkg.Confinement{Denies: &pluginpkg.Permissions{}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isDefaultLaunch(tc.l, tc.p); got != tc.want {
				t.Fatalf("isDefaultLaunch = %v, want %v", got, tc.want)
			}
			if !tc.want {
				return
			}
			with := &generation.Inputs{Launch: map[string]generation.Launch{tc.p.Name: tc.l}}
			a, b := generation.NewMember(with, tc.p), generation.NewMember(&generation.Inputs{}, tc.p)
			lazy := func(in *generation.Inputs) bool { return in.LaunchOf(tc.p).Activation == pluginpkg.ActivationLazy }
			if fa, fb := a.Fingerprint(), b.Fingerprint(); a.Required != b.Required || lazy(with) != lazy(&generation.Inputs{}) ||
				fa.Config != fb.Config || fa.Required != fb.Required {
				t.Fatalf("with the entry %+v %+v, without %+v %+v", a, fa, b, fb)
			}
		})
	}
}
