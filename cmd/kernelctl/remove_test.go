package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRemoveAndDisableRefuse removes and disables packages that others
// need or the host config requires: refused with the reason, unless
// --force, when the plan shows what fails with them.
func TestRemoveAndDisableRefuse(t *testing.T) {
	src, dir := t.TempDir(), t.TempDir()
	home := filepath.Join(dir, "home")
	for name, extra := range map[string]string{"kv": kvProvides, "memory": needsKV, "themes": ""} {
		writeFile(t, filepath.Join(src, name, "plugin.json"), declarative(name, "1.0.0", extra))
		if code, _, stderr := kctl("install", filepath.Join(src, name), "--home", home); code != exitOK {
			t.Fatalf("install %s: %s", name, stderr)
		}
	}
	cfg := filepath.Join(dir, "kernel.json")
	writeFile(t, cfg, `{"format": 1, "home": "home", "policy": {"themes": "required"}}`)
	refused := func(op, name, why string) string {
		return "kernelctl: " + op + " " + name + " in " + home + ": " + why + " (--force to " + op + " it anyway)\n"
	}
	if code, _, stderr := kctl("run", "--once", "--config", cfg); code != exitOK { // records generation 1
		t.Fatalf("run --once: %s", stderr)
	}
	steps := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"remove", "kv"}, exitFailed, refused("remove", "kv", "memory requires storage.kv ^1.0, which only kv provides")},
		{[]string{"disable", "kv"}, exitFailed, refused("disable", "kv", "memory requires storage.kv ^1.0, which only kv provides")},
		{[]string{"remove", "themes"}, exitFailed, refused("remove", "themes", "the host requires it")},
		{[]string{"disable", "themes"}, exitFailed, refused("disable", "themes", "the host requires it")},
		{[]string{"disable", "memory"}, exitOK, ""},
		{[]string{"enable", "memory"}, exitOK, ""},
	}
	for _, s := range steps {
		before := treeSnapshot(t, home)
		code, _, stderr := kctl(append(s.args, "--config", cfg)...)
		if code != s.code || stderr != s.stderr {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", s.args, code, stderr, s.code, s.stderr)
		}
		if s.code != exitOK && !reflect.DeepEqual(before, treeSnapshot(t, home)) {
			t.Errorf("%v: the refusal changed the home", s.args)
		}
	}
	code, stdout, stderr := kctl("remove", "kv", "--force", "--config", cfg)
	if code != exitOK {
		t.Fatalf("remove --force: exit %d: %s", code, stderr)
	}
	checkGolden(t, "remove-force", []byte(strings.ReplaceAll(stdout, home, "<home>")))
	if code, _, stderr := kctl("disable", "themes", "--force", "--config", cfg); code != exitOK {
		t.Errorf("disable --force: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{{"remove", "themes", "--force"}, {"remove", "memory", "--json"}} {
		if code, _, stderr := kctl(append(args, "--config", cfg)...); code != exitOK {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
	if entries, err := os.ReadDir(filepath.Join(home, "packages")); err != nil || len(entries) != 0 {
		t.Errorf("packages/ after removing everything: %v %v", entries, err)
	}
	if code, _, stderr := kctl("remove", "kv", "--home", home); code != exitFailed || !strings.Contains(stderr, "not installed") {
		t.Errorf("remove of a removed package: %d %q", code, stderr)
	}
}
