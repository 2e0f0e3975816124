package pluginpkg

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHiddenDirsRefused plants a symbolic link (to a directory outside the
// home holding files) or a regular file at packages/.previous or
// packages/.staging of a home with demo 1.0.0 installed: every install,
// upgrade (and its preview), rollback and remove is refused, naming the path and what is
// wrong with it, and neither the home nor the link's target changes.
func TestHiddenDirsRefused(t *testing.T) {
	ops := []struct {
		name string
		run  func(t *testing.T, home string) error
	}{
		{"upgrade", func(t *testing.T, home string) error {
			_, err := InstallSource(home, writeDir(t, pkgEntries("demo", "2.0.0")), InstallOptions{Upgrade: true})
			return err
		}},
		{"install", func(t *testing.T, home string) error {
			_, err := InstallSource(home, writeDir(t, pkgEntries("other", "1.0.0")), InstallOptions{})
			return err
		}},
		{"upgrade-preview", func(t *testing.T, home string) error {
			p, err := PreviewInstall(home, writeDir(t, pkgEntries("demo", "2.0.0")), InstallOptions{Upgrade: true})
			if err == nil {
				p.Close()
			}
			return err
		}},
		{"rollback", func(_ *testing.T, home string) error { _, err := Rollback(home, "demo"); return err }},
		{"remove", func(_ *testing.T, home string) error { return Remove(home, "demo") }},
	}
	plants := []struct {
		name, dir string
		link      bool
		says      string
	}{
		{"previous-link", PreviousDir, true, `previous-versions directory <home>/packages/.previous is a symbolic link (to "<elsewhere>"): refusing to delete or write through it`},
		{"staging-link", StagingDir, true, `staging directory <home>/packages/.staging is a symbolic link (to "<elsewhere>"): refusing to delete or write through it`},
		{"previous-file", PreviousDir, false, `previous-versions directory <home>/packages/.previous is not a directory (a regular file): refusing to use it`},
		{"staging-file", StagingDir, false, `staging directory <home>/packages/.staging is not a directory (a regular file): refusing to use it`},
	}
	for _, p := range plants {
		for _, op := range ops {
			t.Run(p.name+"/"+op.name, func(t *testing.T) {
				home := filepath.Join(t.TempDir(), "home")
				if _, err := InstallSource(home, writeDir(t, pkgEntries("demo", "1.0.0")), InstallOptions{}); err != nil {
					t.Fatal(err)
				}
				// The target holds what a write through the link would
				// replace or delete: a package of the name (a version
				// Rollback would restore) and a file beside it.
				elsewhere := t.TempDir()
				writeFile(t, elsewhere, "keep.txt", "not the home's")
				for _, e := range pkgEntries("demo", "0.9.0") {
					if e.link == "" && !strings.HasSuffix(e.name, "/") {
						writeFile(t, filepath.Join(elsewhere, "demo"), e.name, e.body)
					}
				}
				planted := filepath.Join(home, PackagesDir, p.dir)
				if p.link {
					if err := os.Symlink(elsewhere, planted); err != nil {
						t.Fatal(err)
					}
				} else {
					writeFile(t, filepath.Join(home, PackagesDir), p.dir, "not a directory")
				}
				homeBefore, targetBefore := snapshotTree(t, home), snapshotTree(t, elsewhere)
				err := op.run(t, home)
				want := strings.NewReplacer("<home>", home, "<elsewhere>", elsewhere).Replace(p.says)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error = %v\nwant one saying %s", err, want)
				}
				assertUnchanged(t, elsewhere, targetBefore)
				assertUnchanged(t, home, homeBefore)
			})
		}
	}
}

// TestLinkedPreviousVersion: upgrading a package whose directory is a
// symbolic link (a layout the loader follows) keeps the link itself in
// packages/.previous/<name>. Such a link is moved and unlinked, never
// written through: rolling back puts the link back, upgrading again and
// removing drop only the link, and its target never changes.
func TestLinkedPreviousVersion(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		t.Run(map[bool]string{false: "exchange", true: "renames"}[fallback], func(t *testing.T) {
			withFallback(t, fallback)
			home := filepath.Join(t.TempDir(), "home")
			target := writeDir(t, pkgEntries("demo", "1.0.0"))
			if err := os.MkdirAll(filepath.Join(home, PackagesDir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(home, PackagesDir, "demo")); err != nil {
				t.Fatal(err)
			}
			before := snapshotTree(t, target)
			steps := []struct {
				name string
				run  func() error
				link string // where the link must be after the step
			}{
				{"upgrade", func() error {
					_, err := InstallSource(home, writeDir(t, pkgEntries("demo", "2.0.0")), InstallOptions{Upgrade: true})
					return err
				}, previousPath(home, "demo")},
				{"rollback", func() error { _, err := Rollback(home, "demo"); return err }, filepath.Join(home, PackagesDir, "demo")},
				{"rollback-again", func() error { _, err := Rollback(home, "demo"); return err }, previousPath(home, "demo")},
				{"upgrade-again", func() error {
					_, err := InstallSource(home, writeDir(t, pkgEntries("demo", "3.0.0")), InstallOptions{Upgrade: true})
					return err
				}, ""},
				{"remove", func() error { return Remove(home, "demo") }, ""},
			}
			for _, s := range steps {
				if err := s.run(); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if s.link != "" {
					if got, err := os.Readlink(s.link); err != nil || got != target {
						t.Errorf("after %s: %s links to %q (%v), want %q", s.name, s.link, got, err, target)
					}
				}
				assertUnchanged(t, target, before)
			}
			if _, err := os.Lstat(filepath.Join(home, PackagesDir, "demo")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("packages/demo after remove: %v", err)
			}
		})
	}
}
