// Package homefiletest builds the hostile files that homefile.Read must
// refuse, for the tests of every package that reads a home file.
package homefiletest

import (
	"os"
	"testing"

	"github.com/extkernel/extkernel/internal/homefile"
)

// Fault turns a path into one kind of file a reader must refuse.
type Fault struct {
	// Name names the fault in subtest names.
	Name string
	// Make creates the hostile file at path; it skips the test where the
	// system cannot create it.
	Make func(t testing.TB, path string)
	// Is is the sentinel the reader's error must wrap.
	Is error
	// Says is a phrase the reader's error must contain.
	Says string
}

// Faults returns every fault for a reader whose limit is limit bytes: a
// symbolic link to /dev/zero, a FIFO, a directory, a sparse file of 1 GiB
// and a sparse file one byte over the limit.
func Faults(limit int64) []Fault {
	over := "larger than the limit of " + homefile.Size(limit)
	return []Fault{
		{"symlink to /dev/zero", func(t testing.TB, path string) { Symlink(t, "/dev/zero", path) }, homefile.ErrNotRegular, "a character device"},
		{"fifo", Mkfifo, homefile.ErrNotRegular, "a FIFO"},
		{"directory", func(t testing.TB, path string) { mkdir(t, path) }, homefile.ErrNotRegular, "a directory"},
		{"oversize file", func(t testing.TB, path string) { Sparse(t, path, 1<<30) }, homefile.ErrTooLarge, over},
		{"one byte over the limit", func(t testing.TB, path string) { Sparse(t, path, limit+1) }, homefile.ErrTooLarge, over},
	}
}

// Symlink creates path as a symbolic link to target.
func Symlink(t testing.TB, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

// Mkfifo creates a FIFO at path, or skips the test where the system has
// no FIFOs or cannot create one.
func Mkfifo(t testing.TB, path string) {
	t.Helper()
	if err := mkfifo(path); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

func mkdir(t testing.TB, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// Sparse creates a file of size bytes at path without writing them.
func Sparse(t testing.TB, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}
