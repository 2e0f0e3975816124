package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/extkernel/extkernel/generation"
)

// hashConfig is the demo's config with every input that reaches plugins
// set, some relative to the config's directory: plugin config, a secret
// and a plain environment variable, limits, confinement with grants by
// variable, and a data root.
const hashConfig = `{
  "format": 1,
  "home": "home",
  "host": {"name": "demo-host", "version": "0.1.0"},
  "capabilities": [{"capability": "host.log", "version": "1.0.0"}],
  "points": ["prompt.submit", "tool.before", "tool.after"],
  "slots": ["context.compactor"],
  "policy": {"audit": "optional"},
  "plugin_config": {"memory": {"keep": 3}},
  "plugin_env": {"redactor": {"TOKEN": {"value": "s3cr3t", "secret": true}, "MODE": "strict"}},
  "limits": {"memory": {"open_files": 256}},
  "confinement": {"default": "off", "packages": {"memory": "best-effort"},
                  "grants": {"memory": {"fs": {"read": ["${data}"]}}}},
  "data_root": "home/data"
}`

// TestGenerationHashIsPathIndependent: two homes with identical inputs
// in different directories (one nested deeper, under another name) plan
// to the same generation hash, and the hash changes with an input.
func TestGenerationHashIsPathIndependent(t *testing.T) {
	buildDemo(t)
	plan := func(dir string) string {
		t.Helper()
		copyDir(t, demoHome, filepath.Join(dir, "home"))
		os.RemoveAll(filepath.Join(dir, "home", "state"))
		if err := os.WriteFile(filepath.Join(dir, "kernel.json"), []byte(hashConfig), 0o644); err != nil {
			t.Fatal(err)
		}
		var p generation.Plan
		kctlJSON(t, exitChanges, &p, "plan", "--config", filepath.Join(dir, "kernel.json"))
		if len(p.ToHash) != 64 {
			t.Fatalf("to_hash %q", p.ToHash)
		}
		return p.ToHash
	}
	a := plan(t.TempDir())
	b := plan(filepath.Join(t.TempDir(), "elsewhere", "deeper"))
	if a != b {
		t.Fatalf("identical inputs in two directories: hashes %s and %s", a, b)
	}
	c := filepath.Join(t.TempDir(), "changed")
	copyDir(t, demoHome, filepath.Join(c, "home"))
	os.WriteFile(filepath.Join(c, "home", "packages", "kvstore", "extra.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(c, "kernel.json"), []byte(hashConfig), 0o644)
	var p generation.Plan
	kctlJSON(t, exitChanges, &p, "plan", "--config", filepath.Join(c, "kernel.json"))
	if p.ToHash == a {
		t.Error("a changed package file left the hash unchanged")
	}
}
