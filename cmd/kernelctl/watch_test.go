package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestWatcher: changes to the watched files come in one debounced batch
// each, a package added later is watched too, and what a reload does not
// read is ignored.
func TestWatcher(t *testing.T) {
	home := t.TempDir()
	cfgDir := t.TempDir()
	cfg := filepath.Join(cfgDir, "kernel.json")
	mustWrite(t, cfg, "{}")
	mustWrite(t, filepath.Join(home, "packages", "a", "plugin.json"), "{}")
	w, err := newWatcher(home, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()

	tests := []struct {
		name   string
		change func()
		want   watchBatch
	}{
		{"state-burst", func() {
			for range 5 {
				mustWrite(t, filepath.Join(home, "state.json"), "{}")
			}
		}, watchBatch{home: []string{"state.json"}}},
		{"config", func() { mustWrite(t, cfg, `{"format": 1}`) }, watchBatch{config: true}},
		{"package-file", func() { mustWrite(t, filepath.Join(home, "packages", "a", "plugin.json"), "{ }") },
			watchBatch{home: []string{filepath.Join("packages", "a", "plugin.json")}}},
		{"new-package", func() { mustMkdir(t, filepath.Join(home, "packages", "b")) },
			watchBatch{home: []string{filepath.Join("packages", "b")}}},
		{"in-new-package", func() {
			mustWrite(t, filepath.Join(home, "packages", "b", "plugin.json"), "{}")
			mustWrite(t, filepath.Join(home, "unrelated.txt"), "x") // not read by a reload
			mustWrite(t, filepath.Join(cfgDir, "other.json"), "x")  // not the config
		}, watchBatch{home: []string{filepath.Join("packages", "b", "plugin.json")}}},
		{"noise-ignored", func() {
			// An install's staging, an interpreter's cache and an editor's
			// swap, lock, backup, probe and temporary files (issue 26 item 1).
			for _, rel := range []string{".staging/c/plugin.json", ".previous/a/plugin.json", "a/__pycache__/m.cpython-312.pyc",
				"a/.plugin.json.swp", "a/.plugin.json.swx", "a/plugin.json~", "a/.#plugin.json", "a/4913", "a/plugin.json.tmp"} {
				mustWrite(t, filepath.Join(home, "packages", filepath.FromSlash(rel)), "x")
			}
			mustWrite(t, filepath.Join(home, "packages", "a", "main.py"), "print()")
		}, watchBatch{home: []string{filepath.Join("packages", "a", "main.py")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change()
			select {
			case got := <-w.changes:
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("batch = %+v, want %+v", got, tt.want)
				}
			case <-time.After(waitLimit):
				t.Fatal("no batch")
			}
		})
	}
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}
