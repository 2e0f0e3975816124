package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var hashRE = regexp.MustCompile(`"[0-9a-f]{64}"`)

// TestGoldenPlanDiff records a generation with `run --once`, changes the
// home and config in every way a plan classifies, and checks `plan` and
// `diff` output (human and JSON) and exit codes.
func TestGoldenPlanDiff(t *testing.T) {
	buildDemo(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	copyDir(t, demoHome, home)
	if err := os.RemoveAll(filepath.Join(home, "state")); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "kernel.json")
	writeConfig := func(policy map[string]string) {
		data, err := os.ReadFile(demoConfig)
		if err != nil {
			t.Fatal(err)
		}
		var cfg map[string]any
		if err := json.Unmarshal(data, &cfg); err != nil {
			t.Fatal(err)
		}
		cfg["policy"] = policy
		data, _ = json.MarshalIndent(cfg, "", "  ")
		writeFile(t, cfgPath, string(data))
	}
	writeConfig(map[string]string{"audit": "optional"})
	step := func(name string, wantCode int, args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != wantCode {
			t.Fatalf("%s: exit code %d, want %d; stderr:\n%s", name, code, wantCode, stderr.String())
		}
		if name != "" {
			checkGolden(t, name, hashRE.ReplaceAll(stdout.Bytes(), []byte(`"<hash>"`)))
		}
	}

	step("plan-first", exitChanges, "plan", "--config", cfgPath)
	step("", exitOK, "run", "--config", cfgPath, "--once")
	step("plan-nochange", exitOK, "plan", "--config", cfgPath)
	before := filepath.Join(dir, "before.json")
	copyFile(t, filepath.Join(home, "state", "current.json"), before)

	writeManifest(t, home, "audit", func(m map[string]any) { m["version"] = "1.1.0" })
	if err := os.RemoveAll(filepath.Join(home, "packages", "themes")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, "packages", "search", "plugin.json"),
		`{"format": 1, "name": "search", "version": "0.1.0", "provides": [{"capability": "search.index", "version": "0.1.0"}]}`)
	writeConfig(map[string]string{"audit": "optional", "memory": "required"})
	step("plan-changes", exitChanges, "plan", "--config", cfgPath)
	step("plan-changes-json", exitChanges, "plan", "--config", cfgPath, "--json")

	step("", exitOK, "run", "--config", cfgPath, "--once")
	after := filepath.Join(home, "state", "current.json")
	step("diff", exitChanges, "diff", before, after)
	step("diff-json", exitChanges, "diff", "--json", before, after)
	step("diff-same", exitOK, "diff", after, after)
	noChildren(t)
}

func TestPlanDiffErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, `{"format": 9}`)
	tests := []struct {
		args       []string
		code       int
		wantStderr string
	}{
		{[]string{"diff", bad, bad}, exitFailed, "kernelctl: snapshot " + bad + ": format 9 is not supported (this build reads format 1)\n"},
		{[]string{"diff", filepath.Join(dir, "none.json"), bad}, exitFailed, "kernelctl: snapshot: open " + filepath.Join(dir, "none.json") + ": no such file or directory\n"},
		{[]string{"diff", bad}, exitUsage, "kernelctl: accepts 2 arg(s), received 1\nRun 'kernelctl diff --help' for usage.\n"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := run(tt.args, &stdout, &stderr); code != tt.code || stderr.String() != tt.wantStderr {
			t.Errorf("%v: code %d stderr %q; want %d %q", tt.args, code, stderr.String(), tt.code, tt.wantStderr)
		}
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, string(data))
}
