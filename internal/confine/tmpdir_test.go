//go:build unix

package confine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHoldTmp: with a data root a plugin's ${tmp} is <root>/.tmp/<name>,
// emptied when held (what a host killed before left) and when released,
// symbolic links removed as links; a second instance held meanwhile gets
// a directory of its own in the system's temporary directory, removed
// when released; a host without a data root gets one too.
func TestHoldTmp(t *testing.T) {
	root := t.TempDir()
	kept := filepath.Join(root, TmpRoot, "p")
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(kept, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kept, "sub", "stale"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}

	first, err := HoldTmp(root, "p")
	if err != nil {
		t.Fatal(err)
	}
	if first.Path != kept {
		t.Fatalf("Path = %s, want %s", first.Path, kept)
	}
	assertEmpty(t, kept, "when held")
	if err := os.Symlink(outside, filepath.Join(kept, "link")); err != nil {
		t.Fatal(err)
	}

	second, err := HoldTmp(root, "p")
	if err != nil {
		t.Fatal(err)
	}
	if second.Path == kept || !strings.HasPrefix(filepath.Base(second.Path), "extkernel-tmp-p-") {
		t.Errorf("a second instance got %s, want a directory of its own", second.Path)
	}
	if err := second.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(second.Path); err == nil {
		t.Errorf("%s is left after its release", second.Path)
	}

	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(); err != nil {
		t.Fatalf("a second Release: %v", err)
	}
	assertEmpty(t, kept, "after the release")
	if b, err := os.ReadFile(outside); err != nil || string(b) != "keep" {
		t.Errorf("the link's target: %q, %v", b, err)
	}

	again, err := HoldTmp(root, "p")
	if err != nil {
		t.Fatal(err)
	}
	if again.Path != kept {
		t.Errorf("once released, the kept directory is not held again: %s", again.Path)
	}
	again.Release()

	none, err := HoldTmp("", "p")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(none.Path), "extkernel-tmp-p-") {
		t.Errorf("without a data root: %s", none.Path)
	}
	none.Release()
	if _, err := os.Stat(none.Path); err == nil {
		t.Errorf("%s is left after its release", none.Path)
	}
}

// TestHoldTmpRefusesALink: a ${tmp} that is a symbolic link (to a
// directory elsewhere) is not followed, and not emptied.
func TestHoldTmpRefusesALink(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(elsewhere, "precious"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, TmpRoot), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, TmpRoot, "p")); err != nil {
		t.Fatal(err)
	}
	if tmp, err := HoldTmp(root, "p"); err == nil {
		tmp.Release()
		t.Error("a ${tmp} that is a symbolic link was held")
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "precious")); err != nil {
		t.Errorf("the link's target was emptied: %v", err)
	}
}

// assertEmpty fails t unless dir exists and holds nothing.
func assertEmpty(t *testing.T, dir, when string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	if err != nil || len(left) > 0 {
		t.Errorf("%s %s: %v (%v), want it empty", dir, when, left, err)
	}
}
