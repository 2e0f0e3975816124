package generation

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/homefile/homefiletest"
)

// file writes rel (slash-separated) in the named package with mode 0644.
func (h *planHome) file(name, rel, content string) {
	path := filepath.Join(h.dir, "packages", name, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// interpreterDir writes an executable "tool" with content into a new
// directory and returns the directory.
func interpreterDir(t *testing.T, content string) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tool"), []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPlanScriptReasons plans a package run by an interpreter found on PATH
// ("command": "tool", "args": ["plugin.sh"]): edits to its files are named,
// interpreter caches are not changes, a different interpreter is one, and
// the same interpreter content found under another PATH is not.
func TestPlanScriptReasons(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, h *planHome, path1 string) // returns with PATH set for the second plan
		want   string                                        // "" = unchanged
	}{
		{"nothing", func(*testing.T, *planHome, string) {}, ""},
		{"script edited", func(_ *testing.T, h *planHome, _ string) { h.file("script", "plugin.sh", "echo v2\n") },
			"reloaded: package files changed (plugin.sh)"},
		{"five files", func(_ *testing.T, h *planHome, _ string) {
			for _, f := range []string{"lib/e.sh", "lib/d.sh", "plugin.sh", "lib/a.sh", "lib/c.sh"} {
				h.file("script", f, "new "+f)
			}
		}, "reloaded: package files changed (lib/a.sh, lib/c.sh, lib/d.sh and 2 more)"},
		{"file removed", func(t *testing.T, h *planHome, _ string) {
			if err := os.Remove(filepath.Join(h.dir, "packages", "script", "lib", "util.sh")); err != nil {
				t.Fatal(err)
			}
		}, "reloaded: package files changed (lib/util.sh)"},
		{"interpreter caches", func(_ *testing.T, h *planHome, _ string) {
			h.file("script", "__pycache__/plugin.cpython-312.pyc", "x")
			h.file("script", "node_modules/.cache/x", "x")
		}, ""},
		{"interpreter edited", func(t *testing.T, _ *planHome, path1 string) {
			if err := os.WriteFile(filepath.Join(path1, "tool"), []byte("#!/bin/sh\n# v2\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "reloaded: interpreter changed (PATH1/tool)"},
		{"same interpreter on another PATH", func(t *testing.T, _ *planHome, _ string) {
			t.Setenv("PATH", interpreterDir(t, "#!/bin/sh\n"))
		}, ""},
		{"other interpreter on another PATH", func(t *testing.T, _ *planHome, _ string) {
			t.Setenv("PATH", interpreterDir(t, "#!/bin/sh\n# other\n"))
		}, "reloaded: interpreter changed (PATH2/tool)"},
		{"script and manifest", func(_ *testing.T, h *planHome, _ string) {
			h.mans["script"]["description"] = "edited"
			h.write("script")
			h.file("script", "plugin.sh", "echo v2\n")
		}, "reloaded: manifest changed; package files changed (plugin.sh)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path1 := interpreterDir(t, "#!/bin/sh\n")
			t.Setenv("PATH", path1)
			h := newPlanHome(t)
			h.put("script", map[string]any{"runtime": map[string]any{"command": "tool", "args": []any{"plugin.sh"}}})
			h.file("script", "plugin.sh", "echo v1\n")
			h.file("script", "lib/util.sh", "true\n")
			from := snapshotOf(t, h.inputs())
			tt.change(t, h, path1)
			p, err := NewPlan(from, h.inputs())
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, c := range p.Packages {
				if c.Class != ClassUnchanged {
					if c.Name != "script" {
						t.Errorf("%s: %s %v", c.Name, c.Class, c.Reasons)
					}
					got = string(c.Class) + ": " + strings.Join(c.Reasons, "; ")
				}
			}
			got = strings.ReplaceAll(got, path1, "PATH1")
			got = strings.ReplaceAll(got, os.Getenv("PATH"), "PATH2")
			if got != tt.want {
				t.Errorf("script: %q, want %q", got, tt.want)
			}
			if p.Changed() != (tt.want != "") {
				t.Errorf("Changed() = %v, hashes %s -> %s", p.Changed(), p.FromHash, p.ToHash)
			}
		})
	}
}

// TestPlanOlderSnapshots plans from snapshots written without per-file
// digests (only the files digest: "package files changed") and without any
// files digest (an earlier version: restarted once, saying why).
func TestPlanOlderSnapshots(t *testing.T) {
	tests := []struct {
		name string
		old  func(fp *Fingerprint)
		edit bool
		want []string
	}{
		{"no per-file digests, unchanged", func(fp *Fingerprint) { fp.FileDigests = nil }, false, nil},
		{"no per-file digests, edited", func(fp *Fingerprint) { fp.FileDigests = nil }, true, []string{"package files changed"}},
		{"earlier version", func(fp *Fingerprint) { fp.Files, fp.FileDigests, fp.Executable = "", nil, "size:3,mtime:1" }, false,
			[]string{"package files not recorded in generation 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newPlanHome(t)
			from := snapshotOf(t, h.inputs())
			tt.old(&from.pkg("audit").Fingerprint)
			if tt.edit {
				h.file("audit", "lib.sh", "x")
			}
			p, err := NewPlan(from, h.inputs())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range p.Packages {
				if c.Name == "audit" && !reflect.DeepEqual(c.Reasons, tt.want) {
					t.Errorf("audit: %s %q, want %q", c.Class, c.Reasons, tt.want)
				}
			}
		})
	}
}

// TestFingerprintFileDigestsBounded records per-file digests only up to
// maxRecordedFiles files.
func TestFingerprintFileDigestsBounded(t *testing.T) {
	h := newPlanHome(t)
	for i := 0; i <= maxRecordedFiles; i++ {
		h.file("audit", fmt.Sprintf("data/%04d", i), "")
	}
	s := snapshotOf(t, h.inputs())
	if fp := s.pkg("audit").Fingerprint; fp.FileDigests != nil || !strings.HasPrefix(fp.Files, "sha256:") {
		t.Errorf("audit: %d per-file digests, files %q; want none and a digest", len(fp.FileDigests), fp.Files)
	}
	if fp := s.pkg("redactor").Fingerprint; len(fp.FileDigests) != 2 {
		t.Errorf("redactor: per-file digests %v, want plugin.json and bin/plugin", fp.FileDigests)
	}
}

// TestPlanWarnsUndigested warns about a package holding a FIFO, naming it.
func TestPlanWarnsUndigested(t *testing.T) {
	h := newPlanHome(t)
	from := snapshotOf(t, h.inputs())
	fifo := filepath.Join(h.dir, "packages", "audit", "pipe")
	homefiletest.Mkfifo(t, fifo)
	p, err := NewPlan(from, h.inputs())
	if err != nil {
		t.Fatal(err)
	}
	want := `plugin "audit": files cannot be digested, so changes to them are not detected: package "audit": ` + fifo +
		` is a FIFO: not a regular file, directory or symbolic link`
	if !reflect.DeepEqual(p.Warnings, []string{want}) {
		t.Errorf("warnings = %q, want %q", p.Warnings, want)
	}
	if c := p.Packages[0]; c.Name != "audit" || c.Class != ClassReloaded || !strings.HasPrefix(c.Reasons[0], "package files cannot be digested (") {
		t.Errorf("audit: %+v", c)
	}
}

// TestLazyFileReasons: a lazy member's files are compared only while its
// process runs (its snapshot entry then has them); a lazy member without
// a process, on either side, is reloaded for nothing its files say.
func TestLazyFileReasons(t *testing.T) {
	files := func(sum string) Fingerprint {
		return Fingerprint{Version: "1.0.0", Manifest: "m", Files: "sha256:" + sum, Executable: "sha256:e",
			FileDigests: map[string]string{"plugin": sum}}
	}
	declared := Fingerprint{Version: "1.0.0", Manifest: "m"}
	pkg := func(activation string, fp Fingerprint) *SnapshotPackage {
		return &SnapshotPackage{Name: "p", Version: "1.0.0", Status: StatusRunning, Activation: activation, Fingerprint: fp}
	}
	tests := []struct {
		name string
		a, b *SnapshotPackage
		want []string
	}{
		{"lazy, declared on both sides", pkg("lazy", declared), pkg("lazy", declared), nil},
		{"lazy, running from files that changed", pkg("lazy", files("1")), pkg("lazy", files("2")),
			[]string{"package files changed (plugin)"}},
		{"lazy, running from files that did not change", pkg("lazy", files("1")), pkg("lazy", files("1")), nil},
		{"eager to lazy", pkg("", files("1")), pkg("lazy", declared), []string{"activation eager -> lazy"}},
		{"lazy, declared, to eager", pkg("lazy", declared), pkg("", files("2")), []string{"activation lazy -> eager"}},
		{"eager, files changed", pkg("", files("1")), pkg("", files("2")), []string{"package files changed (plugin)"}},
		{"eager, files not recorded", pkg("", declared), pkg("", files("2")), []string{"package files not recorded in generation 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, down := directReasons(3, tt.a, tt.b)
			if !reflect.DeepEqual(got, tt.want) || down != "" {
				t.Errorf("reasons %q (down %q), want %q", got, down, tt.want)
			}
		})
	}
}
