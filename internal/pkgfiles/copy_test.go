//go:build unix

package pkgfiles

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// TestCopyFiles copies a package with an executable, links (inside, inside
// through "..", leaving it relatively, absolute), an empty directory and
// what a digest skips. The copy's digest is the package's; the copy holds
// exactly the digested files, read-only, and its directories; a link
// inside points inside the copy, and one leaving the package resolves to
// what it did in the package.
func TestCopyFiles(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "pkg")
	writeFile(t, dir, "plugin.json", `{}`)
	writeFile(t, dir, "plugin.sh", "echo v1\n")
	chmod(t, dir, "plugin.sh", 0o755)
	writeFile(t, dir, "lib/util.sh", "true\n")
	writeFile(t, root, "outside/x", "outside\n")
	mkdir(t, dir, "empty")
	for _, skip := range []string{"lib/__pycache__/util.cpython-312.pyc", ".git/HEAD", "x.pyc", "node_modules/.cache/y"} {
		writeFile(t, dir, skip, "skipped")
	}
	links := map[string]string{
		"inside": "lib/util.sh", "lib/up": "../plugin.json", "escape": "../outside/x",
		"lib/escape": "../../outside", "abs": filepath.Join(root, "outside", "x"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	dst := t.TempDir()
	c := &digestCache{now: func() time.Time { return time.Now().Add(time.Hour) }}
	d, err := c.files("x", dir, dst)
	if err != nil {
		t.Fatal(err)
	}
	if want := digestOf(t, dir); d.Sum != want.Sum || fmt.Sprint(d.Files) != fmt.Sprint(want.Files) {
		t.Errorf("copy's digest %s %v, package's %s %v", d.Sum, d.Files, want.Sum, want.Files)
	}
	if n := c.reads.Load(); n != 3 {
		t.Errorf("read %d files, want the 3 regular ones", n)
	}
	wantModes := map[string]fs.FileMode{
		"empty": fs.ModeDir | 0o700, "lib": fs.ModeDir | 0o700, "node_modules": fs.ModeDir | 0o700,
		"plugin.json": 0o400, "plugin.sh": 0o500, "lib/util.sh": 0o400,
	}
	for name := range links {
		wantModes[name] = fs.ModeSymlink
	}
	got := map[string]fs.FileMode{}
	err = filepath.WalkDir(dst, func(p string, e fs.DirEntry, err error) error {
		if err != nil || p == dst {
			return err
		}
		fi, err := e.Info()
		rel, _ := filepath.Rel(dst, p)
		mode := fi.Mode()
		if mode&fs.ModeSymlink != 0 {
			mode = fs.ModeSymlink
		}
		got[filepath.ToSlash(rel)] = mode
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(wantModes) {
		t.Errorf("copy holds\n%v\nwant\n%v", got, wantModes)
	}
	wantTargets := map[string]string{
		"inside": "lib/util.sh", "lib/up": "../plugin.json", "abs": links["abs"],
		"escape": dir + "/../outside/x", "lib/escape": filepath.Join(dir, "lib") + "/../../outside",
	}
	for name, want := range wantTargets {
		if target, err := os.Readlink(filepath.Join(dst, name)); err != nil || target != want {
			t.Errorf("link %s in the copy -> %q, %v; want %q", name, target, err, want)
		}
	}
	same := [][2]string{
		{filepath.Join(dst, "inside"), filepath.Join(dst, "lib/util.sh")},
		{filepath.Join(dst, "lib/up"), filepath.Join(dst, "plugin.json")},
		{filepath.Join(dst, "escape"), filepath.Join(root, "outside/x")},
		{filepath.Join(dst, "lib/escape/x"), filepath.Join(root, "outside/x")},
	}
	for _, pair := range same {
		a, errA := os.Stat(pair[0])
		b, errB := os.Stat(pair[1])
		if errA != nil || errB != nil || !os.SameFile(a, b) {
			t.Errorf("%s does not resolve to %s (%v, %v)", pair[0], pair[1], errA, errB)
		}
	}
	// A digest of the copy's directory differs only by the links that
	// leave the package, whose targets the copy rewrote.
	if changed := changedFiles(d, digestOf(t, dst)); !slices.Equal(changed, []string{"escape", "lib/escape"}) {
		t.Errorf("the copy's directory digests differently in %q, want only the links leaving the package", changed)
	}
}

// TestCopyFilesCached copies a package twice with one cache: the second
// time the system copies the files and none is read, with the same digest
// and content. A file rewritten in place while the system copies it (same
// size, its modification time put back) is read and hashed again: the
// copy's digest is that of what it holds.
func TestCopyFilesCached(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("versions without a change time: every copy is read")
	}
	dir := scriptPackage(t)
	c := &digestCache{now: func() time.Time { return time.Now().Add(time.Hour) }}
	first, err := c.files("x", dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	second, err := c.files("x", dir, dst)
	if err != nil || second.Sum != first.Sum || c.reads.Load() != 3 {
		t.Fatalf("second copy: %v, same digest %v, %d reads in all; want the same digest and no more reads", err, second.Sum == first.Sum, c.reads.Load())
	}
	if got, err := os.ReadFile(filepath.Join(dst, "plugin.sh")); err != nil || string(got) != "echo v1\n" {
		t.Errorf("copied plugin.sh = %q, %v", got, err)
	}
	path := filepath.Join(dir, "plugin.sh")
	c.copied = func(p string) {
		if p != path {
			return
		}
		fi, err := os.Stat(p)
		if err == nil {
			err = os.WriteFile(p, []byte("echo v2\n"), 0o644)
		}
		if err == nil {
			err = os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}
		if err != nil {
			t.Error(err)
		}
	}
	dst = t.TempDir()
	third, err := c.files("x", dir, dst)
	if err != nil {
		t.Fatal(err)
	}
	c.copied = nil
	if got, err := os.ReadFile(filepath.Join(dst, "plugin.sh")); err != nil || string(got) != "echo v2\n" {
		t.Errorf("copied plugin.sh = %q, %v; want the content at the second read", got, err)
	}
	if want := digestOf(t, dir); third.Sum != want.Sum || third.Sum == first.Sum || c.reads.Load() != 4 {
		t.Errorf("copy of a file rewritten while copied: digest %s, want the package's now, %s (%d reads in all, want 4)", third.Sum, want.Sum, c.reads.Load())
	}
}

// TestCopyFilesRefuses refuses to write over a file in the destination.
func TestCopyFilesRefuses(t *testing.T) {
	dir := scriptPackage(t)
	dst := t.TempDir()
	writeFile(t, dst, "plugin.sh", "planted")
	var c digestCache
	if _, err := c.files("x", dir, dst); !errors.Is(err, fs.ErrExist) {
		t.Errorf("copy over an existing file: %v, want an error for the existing file", err)
	}
}

// TestCachedFileSHA256 hashes an open file through the cache: an unchanged
// file is read once, a file rewritten in place is read again, and a file
// renamed over the path after the open is not the one hashed.
func TestCachedFileSHA256(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "python3")
	writeFile(t, dir, "python3", "interpreter v1")
	c := &digestCache{now: func() time.Time { return time.Now().Add(time.Hour) }}
	sumOf := func() string {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s, err := c.sumOpen(f)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", s)
	}
	v1 := sumOf()
	if again := sumOf(); again != v1 || c.reads.Load() != 1 {
		t.Errorf("unchanged: %s then %s, %d reads; want the same sum from one read", v1, again, c.reads.Load())
	}
	writeFile(t, dir, "python3", "interpreter v2")
	if v2 := sumOf(); v2 == v1 || c.reads.Load() != 2 {
		t.Errorf("rewritten: %s, %d reads; want a new sum from a second read", v2, c.reads.Load())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	writeFile(t, dir, "other", "interpreter v3")
	if err := os.Rename(filepath.Join(dir, "other"), path); err != nil {
		t.Fatal(err)
	}
	s, err := c.sumOpen(f)
	if err != nil || fmt.Sprintf("%x", s) != fmt.Sprintf("%x", sha256.Sum256([]byte("interpreter v2"))) {
		t.Errorf("renamed over after the open: %x, %v; want the opened file's sum", s, err)
	}
}
