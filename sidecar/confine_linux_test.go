//go:build linux && !extkernel_portable

package sidecar

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
)

// confinedManifest is the good plugin with permissions.
func confinedManifest(name, permissions string) string {
	return `{"format": 1, "name": "` + name + `", "version": "1.0.0",
  "runtime": {"command": "./good", "intercepts": ["tool.before"], "replaces": ["context.compactor"]}, "provides": [{"capability": "test.echo", "version": "1.0.0"}],
  "permissions": ` + permissions + `}`
}

// pluginEnv calls the good plugin's "env" provider.
func pluginEnv(t *testing.T, c *Client) (env []string, cwd string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "env"})
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Env []string
		Cwd string
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	return r.Env, r.Cwd
}

// TestConfinedStart starts the real good plugin confined under "require",
// plain and executable-pinned: it serves, its TMPDIR is its private
// temporary directory (<data root>/.tmp/<name>), which is empty once it
// stopped, the policy never
// reaches its environment, and the report says what is enforced.
func TestConfinedStart(t *testing.T) {
	if landlockABIForTest() < 6 {
		t.Skip("this kernel's Landlock cannot enforce the minimal set (the escape suite says what it misses)")
	}
	for _, pinned := range []bool{false, true} {
		t.Run(map[bool]string{false: "unpinned", true: "executable pin"}[pinned], func(t *testing.T) {
			opts, _ := testOptions(t)
			opts.Confinement = pluginpkg.Confinement{Mode: pluginpkg.ConfineRequire}
			pkg := addPackage(t, t.TempDir(), "confined", confinedManifest("confined", `{"fs": {"write": ["${data}", "${tmp}"]}}`))
			if pinned {
				data, err := os.ReadFile(filepath.Join(pkg.Dir, "good"))
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(data)
				pkg.Pin = hex.EncodeToString(sum[:])
			}
			c, err := Start(context.Background(), pkg, opts)
			if err != nil {
				t.Fatal(err)
			}
			env, _ := pluginEnv(t, c)
			tmp := ""
			for _, kv := range env {
				if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok {
					tmp = v
				}
				if strings.HasPrefix(kv, "EXTKERNEL_CONFINE") {
					t.Errorf("the policy reached the plugin: %s", kv[:40])
				}
			}
			if want := filepath.Join(opts.DataRoot, ".tmp", "confined"); tmp != want {
				t.Errorf("TMPDIR = %q, want the plugin's private directory %s", tmp, want)
			}
			if err := os.WriteFile(filepath.Join(tmp, "left"), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			r := c.Confinement()
			if r.Mode != pluginpkg.ConfineRequire || len(r.NotEnforced) > 0 || !strings.Contains(r.Mechanism, "landlock") {
				t.Errorf("report = %+v", r)
			}
			if !slices.Contains(r.Effective.Write, filepath.Join(opts.DataRoot, "confined")) {
				t.Errorf("effective write = %v, want the data directory", r.Effective.Write)
			}
			closeClient(t, c)
			if left, err := os.ReadDir(tmp); err != nil || len(left) > 0 {
				t.Errorf("the temporary directory holds %v after the stop (%v), want it empty", left, err)
			}
		})
	}
}

// TestConfineRequireRefuses: a connect rule naming a host cannot be
// enforced as written (Landlock restricts ports), nor, before Landlock ABI
// 10, the DNS it needs: "require" refuses to start it, naming each rule,
// before anything runs; "best-effort" starts it and says what is not
// enforced; PlanConfinement says the same without starting anything.
func TestConfineRequireRefuses(t *testing.T) {
	perms := `{"net": {"connect": ["api.example.com:443"]}}`
	opts, _ := testOptions(t)
	opts.Confinement = pluginpkg.Confinement{Mode: pluginpkg.ConfineRequire}
	pkg := addPackage(t, t.TempDir(), "netter", confinedManifest("netter", perms))
	_, err := Start(context.Background(), pkg, opts)
	var se *StartError
	if !errors.As(err, &se) || se.Phase != phaseConfine || !strings.Contains(err.Error(), "any host on port 443") {
		t.Fatalf("Start = %v, want a confine-phase refusal naming the host rule", err)
	}
	planned, perr := PlanConfinement(pkg, opts)
	if perr == nil || perr.Error() != err.Error() || len(planned.NotEnforced) == 0 {
		t.Errorf("PlanConfinement = %+v, %v; want the same refusal", planned, perr)
	}

	opts.Confinement.Mode = pluginpkg.ConfineBestEffort
	c, err := Start(context.Background(), pkg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient(t, c)
	r := c.Confinement()
	if r.Mode != pluginpkg.ConfineBestEffort || !strings.Contains(strings.Join(r.NotEnforced, "\n"), "api.example.com:443") {
		t.Errorf("report = %+v, want the host rule not enforced", r)
	}
}
