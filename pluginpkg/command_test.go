package pluginpkg

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCommandPathSymlinks resolves relative commands through symbolic
// links: a link whose final target is inside the package directory is
// followed, one that leads outside (directly, through a linked directory or
// through a chain of links) is refused naming both paths.
func TestCommandPathSymlinks(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "outside")
	writeExecutable(t, outside, "tool")
	pkgDir := filepath.Join(root, "pkgDir")
	writeExecutable(t, pkgDir, "bin/run")
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(pkgDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	link("bin/run", "inside-link")               // relative, inside
	link(filepath.Join(pkgDir, "bin"), "bindir") // absolute, but inside
	link(filepath.Join(outside, "tool"), "escape")
	link(outside, "outdir")
	link("escape", "chain") // inside link -> inside link -> outside file
	// The package directory is itself a link, as an installed package may
	// be: it is compared with its links resolved.
	dir := filepath.Join(root, "packages", "p")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pkgDir, dir); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		command string
		want    string // the path returned, or "" for a refusal
		target  string // the refusal's resolved target
	}{
		{command: "./bin/run", want: filepath.Join(dir, "bin/run")},
		{command: "./inside-link", want: filepath.Join(dir, "inside-link")},
		{command: "bindir/run", want: filepath.Join(dir, "bindir/run")},
		{command: "./escape", target: filepath.Join(outside, "tool")},
		{command: "./outdir/tool", target: filepath.Join(outside, "tool")},
		{command: "./chain", target: filepath.Join(outside, "tool")},
		{command: "sh"}, // a bare name goes wherever PATH leads
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			p := &Package{Name: "p", Dir: dir, Manifest: &Manifest{Runtime: &Runtime{Command: tt.command}}}
			got, err := p.CommandPath()
			switch {
			case tt.target != "":
				want := `package "p": command "` + tt.command + `" resolves to ` + tt.target + `, outside the package directory ` + pkgDir
				if !errors.Is(err, ErrCommandOutside) || err.Error() != want {
					t.Errorf("CommandPath = %q, %v; want the error\n%s", got, err, want)
				}
			case tt.want != "":
				if err != nil || got != tt.want {
					t.Errorf("CommandPath = %q, %v; want %q", got, err, tt.want)
				}
			default:
				if err != nil || !filepath.IsAbs(got) {
					t.Errorf("CommandPath = %q, %v; want an absolute path", got, err)
				}
			}
		})
	}
}

func writeExecutable(t *testing.T, root, rel string) {
	t.Helper()
	writeFile(t, root, rel, "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(root, rel), 0o755); err != nil {
		t.Fatal(err)
	}
}
