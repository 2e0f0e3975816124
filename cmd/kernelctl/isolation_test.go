package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const isolationHome = "../../testdata/homes/isolation"

var (
	scriptedOnce sync.Once
	scriptedBin  string
	scriptedErr  error
	scriptedOut  []byte
)

// buildScripted compiles the scripted test plugin once per test binary.
func buildScripted(t *testing.T) string {
	t.Helper()
	scriptedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kernelctl-scripted-")
		if err != nil {
			scriptedErr = err
			return
		}
		scriptedBin = filepath.Join(dir, "scripted")
		scriptedOut, scriptedErr = exec.Command("go", "build", "-o", scriptedBin, "../../testdata/plugins/scripted").CombinedOutput()
	})
	if scriptedErr != nil {
		t.Fatalf("building the scripted plugin: %v\n%s", scriptedErr, scriptedOut)
	}
	return scriptedBin
}

// isolationCopy copies testdata/homes/isolation into a temporary directory,
// with the scripted plugin as every package's ./plugin; it returns the
// directory and the config.
func isolationCopy(t *testing.T) (dir, cfg string) {
	t.Helper()
	bin := buildScripted(t)
	dir = t.TempDir()
	home := filepath.Join(dir, "home")
	copyDir(t, isolationHome, home)
	entries, err := os.ReadDir(filepath.Join(home, "packages"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		dst := filepath.Join(home, "packages", e.Name(), "plugin")
		if err := os.Link(bin, dst); err != nil {
			data, rerr := os.ReadFile(bin)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if err := os.WriteFile(dst, data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir, filepath.Join(home, "kernel.json")
}

// TestGoldenIsolation runs plan, doctor and run --once on a home of real
// plugins where one optional plugin breaks each rule: what can be known
// before anything starts is warned about by plan and doctor; run publishes
// the rest of the generation, and every warning names the plugin and the
// rule.
func TestGoldenIsolation(t *testing.T) {
	dir, cfg := isolationCopy(t)
	steps := []struct {
		name      string
		args      []string
		wantCode  int
		normalize func(string) string
	}{
		{"plan-isolation", []string{"plan", "--config", cfg}, exitChanges, nil},
		{"doctor-isolation", []string{"doctor", "--config", cfg}, exitOK, nil},
		{"run-isolation", []string{"run", "--once", "--config", cfg}, exitOK, normalizeRun},
	}
	for _, s := range steps {
		var stdout, stderr bytes.Buffer
		if code := run(s.args, &stdout, &stderr); code != s.wantCode {
			t.Fatalf("%s: exit code %d, want %d; stderr:\n%s", s.name, code, s.wantCode, stderr.String())
		}
		out := strings.ReplaceAll(stdout.String(), dir+string(filepath.Separator), "<dir>/")
		if s.normalize != nil {
			out = s.normalize(out)
		}
		checkGolden(t, s.name, hashRE.ReplaceAll([]byte(out), []byte(`"<hash>"`)))
	}
	noChildren(t)
}

// TestPlanProblemsExitOne: a plan whose build would fail (two required
// plugins claiming one slot) exits 1, not 2, though it has changes.
func TestPlanProblemsExitOne(t *testing.T) {
	_, cfg := isolationCopy(t)
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["policy"] = map[string]string{"squatter": "required"}
	data, _ = json.Marshal(m)
	writeFile(t, cfg, string(data))
	var stdout, stderr bytes.Buffer
	if code := run([]string{"plan", "--config", cfg}, &stdout, &stderr); code != exitFailed {
		t.Errorf("exit code = %d, want %d; stderr:\n%s", code, exitFailed, stderr.String())
	}
	want := "problems (the build would fail):\n  slot \"context.compactor\" is claimed by both \"core\" (manifest) and \"squatter\" (manifest); name its owner in the host config's slot_owners\n"
	if !strings.Contains(stdout.String(), want) {
		t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
	}
}
