package kernel

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/generation"
)

// scriptHome installs the bash-script fixture (run as "bash plugin.sh") in a
// new home and returns the home and the script's path.
func scriptHome(t *testing.T) (home, script string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash:", err)
	}
	home = t.TempDir()
	dir := filepath.Join(home, "packages", "bash-script")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"plugin.json", "plugin.sh"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "plugins", "bash-script", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home, filepath.Join(dir, "plugin.sh")
}

// TestReloadScriptPlugin runs a plugin written in bash: the same bash found
// under another PATH is no change; editing the script makes the plan say
// "package files changed (plugin.sh)", and Reload restarts the plugin so the
// new code answers.
func TestReloadScriptPlugin(t *testing.T) {
	home, script := scriptHome(t)
	k := startKernel(t, testConfig(home))
	ctx := context.Background()
	version := func() string {
		t.Helper()
		out, err := k.CallProvider(ctx, "plugin/bash-script/version", nil)
		if err != nil {
			t.Fatalf("CallProvider: %v", err)
		}
		return string(out)
	}
	if v := version(); v != `"v1"` {
		t.Fatalf("version = %s, want \"v1\"", v)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bash)
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "bash"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", other)
	if p, err := k.Plan(ctx); err != nil || p.Changed() {
		t.Fatalf("plan with the same bash under another PATH: %+v, %v; want no change", p, err)
	}

	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(strings.Replace(string(src), "VERSION=v1", "VERSION=v2", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{"package files changed (plugin.sh)"}
	p, err := k.Plan(ctx)
	if err != nil || len(p.Packages) != 1 || p.Packages[0].Class != generation.ClassReloaded || strings.Join(p.Packages[0].Reasons, "; ") != want[0] {
		t.Fatalf("plan after editing the script: %+v, %v; want bash-script reloaded: %s", p, err, want[0])
	}
	res, err := k.Reload(ctx)
	if err != nil || !res.Published {
		t.Fatalf("Reload: %+v, %v", res, err)
	}
	if v := version(); v != `"v2"` {
		t.Errorf("version after reload = %s, want \"v2\"", v)
	}
	if p, err := k.Plan(ctx); err != nil || p.Changed() {
		t.Errorf("plan after the reload: %+v, %v; want no change", p, err)
	}
}
