package pkgfiles

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNoLinks holds that the one-lstat-per-component shortcut of
// CommandPath takes only link-free commands: every link goes through the
// full check (pluginpkg's TestCommandPathSymlinks covers the resolution).
func TestNoLinks(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "outside")
	writeFile(t, outside, "tool", "#!/bin/sh\n")
	dir := filepath.Join(root, "pkg")
	writeFile(t, dir, "bin/run", "#!/bin/sh\n")
	for target, name := range map[string]string{
		"bin/run":                      "inside-link",
		filepath.Join(dir, "bin"):      "bindir",
		filepath.Join(outside, "tool"): "escape",
		outside:                        "outdir",
		"escape":                       "chain",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		cmd  string
		want bool
	}{
		{"./bin/run", true}, {"bin/run", true}, {"./inside-link", false}, {"bindir/run", false},
		{"./escape", false}, {"./outdir/tool", false}, {"./chain", false}, {"./missing", false},
		{"../pkg/bin/run", false},
	}
	for _, tt := range tests {
		if got := noLinks(dir, tt.cmd); got != tt.want {
			t.Errorf("noLinks(%q) = %v, want %v", tt.cmd, got, tt.want)
		}
	}
}
