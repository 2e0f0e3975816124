package pkgfiles

import (
	"os"
	"path/filepath"
	"strings"
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

// TestPlainCommand holds the shortcut of CommandDigest to a link-free,
// executable regular file: it agrees with CommandPath there and leaves
// every other command (links, "..", a directory, a file not executable, a
// missing one, a bare name) to it, so that CommandDigest's answers and
// errors are CommandPath's.
func TestPlainCommand(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "pkg")
	writeFile(t, dir, "bin/run", "#!/bin/sh\n")
	writeFile(t, dir, "data.txt", "x\n")
	if err := os.Chmod(filepath.Join(dir, "bin/run"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("bin/run", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cmd  string
		want bool
	}{
		{"./bin/run", true}, {"bin/run", true}, {"./bin/../bin/run", true},
		{"./link", false}, {"../pkg/bin/run", false}, {"./bin", false}, {"./data.txt", false},
		{"./missing", false}, {"sh", false},
	}
	for _, tt := range tests {
		r := Ref{Name: "p", Dir: dir, Command: tt.cmd}
		path, _, ok := r.plainCommand()
		if ok != tt.want {
			t.Errorf("plainCommand(%q) ok = %v, want %v", tt.cmd, ok, tt.want)
			continue
		}
		if !ok {
			continue
		}
		want, err := r.CommandPath()
		if err != nil || path != want {
			t.Errorf("plainCommand(%q) = %q, CommandPath = %q, %v", tt.cmd, path, want, err)
		}
	}
	// CommandDigest gives CommandPath's error for what the shortcut leaves.
	if _, _, err := (Ref{Name: "p", Dir: dir, Command: "./data.txt"}).CommandDigest(); err == nil ||
		!strings.Contains(err.Error(), `package "p": command "./data.txt"`) {
		t.Errorf("CommandDigest of a file that is not executable: %v", err)
	}
}
