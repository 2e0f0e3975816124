package pkgfiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/homefile/homefiletest"
)

// digestOf digests dir with a fresh cache whose clock is far in the
// future, so every version it reads is trusted afterwards.
func digestOf(t *testing.T, dir string) *FileDigest {
	t.Helper()
	c := &digestCache{now: func() time.Time { return time.Now().Add(time.Hour) }}
	d, err := c.files("x", dir, "")
	if err != nil {
		t.Fatalf("files(%s): %v", dir, err)
	}
	return d
}

// scriptPackage writes a small interpreted package: plugin.sh, a manifest
// and lib/util.sh.
func scriptPackage(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "plugin.json", `{}`)
	writeFile(t, dir, "plugin.sh", "echo v1\n")
	writeFile(t, dir, "lib/util.sh", "true\n")
	return dir
}

// TestFilesDigestCovers changes one thing at a time and checks whether the
// digest changes and which files it names.
func TestFilesDigestCovers(t *testing.T) {
	tests := []struct {
		name    string
		change  func(t *testing.T, dir string)
		changed []string // entries whose digest differs, added or removed; nil = same digest
	}{
		{"content", func(t *testing.T, dir string) { writeFile(t, dir, "plugin.sh", "echo v2\n") }, []string{"plugin.sh"}},
		{"exec bit", func(t *testing.T, dir string) { chmod(t, dir, "lib/util.sh", 0o755) }, []string{"lib/util.sh"}},
		{"other mode bits", func(t *testing.T, dir string) { chmod(t, dir, "lib/util.sh", 0o600) }, nil},
		{"added file", func(t *testing.T, dir string) { writeFile(t, dir, "extra.py", "") }, []string{"extra.py"}},
		{"removed file", func(t *testing.T, dir string) { rm(t, dir, "lib/util.sh") }, []string{"lib/util.sh"}},
		{"empty directory", func(t *testing.T, dir string) { mkdir(t, dir, "empty") }, nil},
		{"__pycache__", func(t *testing.T, dir string) { writeFile(t, dir, "lib/__pycache__/util.cpython-312.pyc", "x") }, nil},
		{".pyc", func(t *testing.T, dir string) { writeFile(t, dir, "util.pyc", "x") }, nil},
		{".git", func(t *testing.T, dir string) { writeFile(t, dir, ".git/index", "x") }, nil},
		{"node_modules/.cache", func(t *testing.T, dir string) { writeFile(t, dir, "a/node_modules/.cache/babel/x", "x") }, nil},
		{"node_modules itself", func(t *testing.T, dir string) { writeFile(t, dir, "node_modules/left-pad/index.js", "x") },
			[]string{"node_modules/left-pad/index.js"}},
		{"manifest", func(t *testing.T, dir string) { writeFile(t, dir, "plugin.json", `{"a":1}`) }, []string{"plugin.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := scriptPackage(t)
			before := digestOf(t, dir)
			tt.change(t, dir)
			after := digestOf(t, dir)
			if got := changedFiles(before, after); fmt.Sprint(got) != fmt.Sprint(tt.changed) {
				t.Errorf("changed files = %q, want %q", got, tt.changed)
			}
			if (before.Sum != after.Sum) != (tt.changed != nil) {
				t.Errorf("sum changed = %v, want %v", before.Sum != after.Sum, tt.changed != nil)
			}
		})
	}
}

// TestFilesDigestSymlinkByTarget digests a symbolic link by its target text:
// what it points to is neither followed nor read.
func TestFilesDigestSymlinkByTarget(t *testing.T) {
	dir := scriptPackage(t)
	outside := filepath.Join(t.TempDir(), "lib.sh")
	writeFile(t, filepath.Dir(outside), "lib.sh", "v1")
	if err := os.Symlink(outside, filepath.Join(dir, "link.sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	before := digestOf(t, dir)
	writeFile(t, filepath.Dir(outside), "lib.sh", "v2 and longer")
	writeFile(t, filepath.Dir(outside), "new", "x")
	if after := digestOf(t, dir); after.Sum != before.Sum {
		t.Errorf("digest changed when the link's target changed: %q", changedFiles(before, after))
	}
	rm(t, dir, "link.sh")
	if err := os.Symlink("elsewhere", filepath.Join(dir, "link.sh")); err != nil {
		t.Fatal(err)
	}
	if got := changedFiles(before, digestOf(t, dir)); fmt.Sprint(got) != "[link.sh]" {
		t.Errorf("after relinking, changed = %q, want [link.sh]", got)
	}
}

// TestFilesDigestRefuses refuses what cannot be digested, naming the
// package and the file or bound.
func TestFilesDigestRefuses(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, dir string)
		is   error
		says string
	}{
		{"fifo", func(t *testing.T, dir string) {
			homefiletest.Mkfifo(t, filepath.Join(dir, "lib", "pipe"))
		}, ErrIrregularFile, "lib/pipe is a FIFO"},
		{"socket", func(t *testing.T, dir string) {
			fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				t.Skip("socket:", err)
			}
			defer syscall.Close(fd)
			if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(dir, "sock")}); err != nil {
				t.Skip("bind:", err)
			}
		}, ErrIrregularFile, "sock is a socket"},
		{"too many bytes", func(t *testing.T, dir string) {
			f, err := os.Create(filepath.Join(dir, "big.bin"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(MaxPackageBytes + 1); err != nil { // sparse: nothing is written
				t.Fatal(err)
			}
		}, ErrPackageTooLarge, "hold more than 256 MiB"},
		{"too many files", func(t *testing.T, dir string) {
			for i := 0; i < MaxPackageFiles; i++ { // plus the three of scriptPackage
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}, ErrPackageTooLarge, "more than 10000 files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := scriptPackage(t)
			tt.make(t, dir)
			var c digestCache
			_, err := c.files("scripty", dir, "")
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), `package "scripty"`) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("files: %v; want an error wrapping %v naming the package and saying %q", err, tt.is, tt.says)
			}
			if n := c.reads.Load(); tt.name == "too many bytes" && n != 0 {
				t.Errorf("read %d files before refusing a file over the byte bound", n)
			}
		})
	}
}

// TestDigestCacheReadsOnlyChanges digests a package twice: the second time
// no file is read. A rewrite with the same size and modification time is
// still noticed (by its change time, on Linux), and a version read within
// RacyWindow of its modification is not trusted.
func TestDigestCacheReadsOnlyChanges(t *testing.T) {
	dir := scriptPackage(t)
	clock := time.Now().Add(time.Hour)
	c := &digestCache{now: func() time.Time { return clock }}
	first, err := c.files("x", dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := c.reads.Load(); n != 3 {
		t.Fatalf("first digest read %d files, want 3", n)
	}
	second, err := c.files("x", dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := c.reads.Load(); n != 3 || second.Sum != first.Sum {
		t.Fatalf("second digest of unchanged files: %d reads in all (want 3), sum equal %v", n, second.Sum == first.Sum)
	}
	if runtime.GOOS == "linux" {
		path := filepath.Join(dir, "plugin.sh")
		fi, _ := os.Stat(path)
		writeFile(t, dir, "plugin.sh", "echo v2\n") // same size
		if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		third, err := c.files("x", dir, "")
		if err != nil {
			t.Fatal(err)
		}
		if n := c.reads.Load(); n != 4 || fmt.Sprint(changedFiles(first, third)) != "[plugin.sh]" {
			t.Fatalf("after a same-size rewrite with the old mtime: %d reads (want 4), changed %q", n, changedFiles(first, third))
		}
	}
	racy := &digestCache{now: func() time.Time { return time.Unix(0, 0) }} // reads "before" every modification
	for i := 0; i < 2; i++ {
		if _, err := racy.files("x", dir, ""); err != nil {
			t.Fatal(err)
		}
	}
	if n := racy.reads.Load(); n != 6 {
		t.Errorf("racily clean versions: %d reads over two digests, want 6 (never trusted)", n)
	}
}

// changedFiles lists the entries that differ between two digests, sorted.
func changedFiles(a, b *FileDigest) []string {
	var out []string
	for f, d := range a.Files {
		if b.Files[f] != d {
			out = append(out, f)
		}
	}
	for f := range b.Files {
		if _, ok := a.Files[f]; !ok {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

func chmod(t *testing.T, dir, rel string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(dir, rel), mode); err != nil {
		t.Fatal(err)
	}
}

func rm(t *testing.T, dir, rel string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, rel)); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, dir, rel string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, rel), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestPinForms accepts both pin forms and nothing else.
func TestPinForms(t *testing.T) {
	hex := strings.Repeat("ab", 32)
	tests := []struct {
		pin              string
		valid, isPackage bool
	}{
		{hex, true, false},
		{"package:" + hex + ":" + hex, true, true},
		{"package:" + hex, false, false},
		{"package:" + hex + ":" + strings.ToUpper(hex), false, false},
		{"package:" + hex + ":" + hex + ":" + hex, false, false},
		{"sha256:" + hex, false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		if ValidPin(tt.pin) != tt.valid || IsPackagePin(tt.pin) != tt.isPackage {
			t.Errorf("%q: valid %v, package pin %v; want %v, %v", tt.pin, ValidPin(tt.pin), IsPackagePin(tt.pin), tt.valid, tt.isPackage)
		}
	}
}

// TestDigestCacheConcurrent digests one package from several goroutines
// (run with -race): every digest is the same.
func TestDigestCacheConcurrent(t *testing.T) {
	dir := scriptPackage(t)
	var c digestCache
	sums := make(chan string, 8)
	for i := 0; i < cap(sums); i++ {
		go func() {
			d, err := c.files("x", dir, "")
			if err != nil {
				sums <- err.Error()
				return
			}
			sums <- d.Sum
		}()
	}
	first := <-sums
	for i := 1; i < cap(sums); i++ {
		if s := <-sums; s != first {
			t.Errorf("digests differ: %s and %s", first, s)
		}
	}
}

func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDirListingCache: a walk of an unchanged package lists its
// directories from the cache; a file added, removed or renamed, in the
// top directory or below, is seen at the next walk (the directory's
// version changed), and a listing taken within RacyWindow of the
// directory's change is not trusted.
func TestDirListingCache(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("listings are cached only where versions carry the change time")
	}
	dir := scriptPackage(t)
	c, walk := settledDigests(t, dir)
	first := walk()
	if len(c.dirs.entries) != 2 {
		t.Fatalf("cached listings %d, want 2 (the package and lib)", len(c.dirs.entries))
	}
	if d := walk(); d.Sum != first.Sum {
		t.Fatal("a second walk of unchanged files differs")
	}
	steps := []struct {
		name   string
		change func()
		want   string
	}{
		{"add at the top", func() { writeFile(t, dir, "new.sh", "x\n") }, "[new.sh]"},
		{"add below", func() { writeFile(t, dir, "lib/more.sh", "x\n") }, "[lib/more.sh new.sh]"},
		{"remove", func() { rm(t, dir, "lib/more.sh") }, "[new.sh]"},
		{"rename", func() {
			if err := os.Rename(filepath.Join(dir, "new.sh"), filepath.Join(dir, "renamed.sh")); err != nil {
				t.Fatal(err)
			}
		}, "[renamed.sh]"},
	}
	for _, s := range steps {
		s.change()
		if got := fmt.Sprint(changedFiles(first, walk())); got != s.want {
			t.Errorf("%s: changed %s, want %s", s.name, got, s.want)
		}
	}
	racy := &digestCache{now: func() time.Time { return time.Unix(0, 0) }}
	if _, err := racy.files("x", dir, ""); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "late.sh", "x\n")
	d, err := racy.files("x", dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Files["late.sh"]; !ok {
		t.Error("a file added after a racy listing was missed")
	}
}

// TestPackageDigestCache: the digest of an unchanged package comes from
// the package cache, without a walk, as a copy its caller may change;
// every change a walk would see is seen (the digest then equals a fresh
// cache's), and a package walked within RacyWindow of a change is not
// cached.
func TestPackageDigestCache(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("packages are cached only where versions carry the change time")
	}
	dir := scriptPackage(t)
	writeFile(t, dir, "lib/deep/data.txt", "one\n")
	if err := os.Symlink("helper.sh", filepath.Join(dir, "lib", "link")); err != nil {
		t.Fatal(err)
	}
	c, digest := settledDigests(t, dir)
	first := digest()
	second := digest()
	if n := c.walks.Load(); n != 1 || second.Sum != first.Sum || len(changedFiles(first, second)) != 0 {
		t.Fatalf("an unchanged package: %d walks (want 1), same sum %v", n, second.Sum == first.Sum)
	}
	for f := range second.Files {
		second.Files[f] = "changed by the caller"
	}
	if third := digest(); len(changedFiles(first, third)) != 0 {
		t.Fatal("a caller's change to a digest's Files reached the cache")
	}
	sameMtime := func(rel, content string) func() {
		return func() {
			path := filepath.Join(dir, rel)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, rel, content)
			if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := []struct {
		name   string
		change func()
		want   string
	}{
		{"same-size rewrite with the old mtime", sameMtime("plugin.sh", "echo v2\n"), "[plugin.sh]"},
		{"deep rewrite with the old mtime", sameMtime("lib/deep/data.txt", "two\n"), "[lib/deep/data.txt]"},
		{"made executable", func() { chmod(t, dir, "lib/deep/data.txt", 0o755) }, "[lib/deep/data.txt]"},
		{"link retargeted", func() {
			rm(t, dir, "lib/link")
			if err := os.Symlink("elsewhere", filepath.Join(dir, "lib", "link")); err != nil {
				t.Fatal(err)
			}
		}, "[lib/link]"},
		{"added deep", func() { writeFile(t, dir, "lib/deep/new.txt", "x\n") }, "[lib/deep/new.txt]"},
		{"file replaced by a directory", func() {
			rm(t, dir, "lib/deep/new.txt")
			writeFile(t, dir, "lib/deep/new.txt/inner", "x\n")
		}, "[lib/deep/new.txt lib/deep/new.txt/inner]"},
	}
	prev := first
	for _, s := range steps {
		s.change()
		got := digest()
		fresh, err := (&digestCache{}).files("x", dir, "")
		if err != nil {
			t.Fatal(err)
		}
		if got.Sum != fresh.Sum {
			t.Errorf("%s: the cached digest differs from a fresh walk's", s.name)
		}
		if changed := fmt.Sprint(changedFiles(prev, got)); changed != s.want {
			t.Errorf("%s: changed %s, want %s", s.name, changed, s.want)
		}
		prev = got
	}
	racy := &digestCache{now: func() time.Time { return time.Unix(0, 0) }}
	for range 2 {
		if _, err := racy.files("x", dir, ""); err != nil {
			t.Fatal(err)
		}
	}
	if n := racy.walks.Load(); n != 2 {
		t.Errorf("racily clean package: %d walks over two digests, want 2 (never cached)", n)
	}
}

// settledDigests returns a digest cache whose clock is an hour ahead (every
// file version settled, past RacyWindow) and a function digesting the
// package dir through it.
func settledDigests(t *testing.T, dir string) (*digestCache, func() *FileDigest) {
	clock := time.Now().Add(time.Hour)
	c := &digestCache{now: func() time.Time { return clock }}
	return c, func() *FileDigest {
		t.Helper()
		d, err := c.files("x", dir, "")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
}
