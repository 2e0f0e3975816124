package pkgfiles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDirStatAt: a file's version stat'ed relative to an open directory is
// the one StatOf gives for its path, through a symbolic link as os.Stat
// follows it, and changes when the file is rewritten; a missing file is
// fs.ErrNotExist, named by its full path.
func TestDirStatAt(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "p/plugin.json", `{"a":1}`)
	file := filepath.Join(root, "p", "plugin.json")
	if err := os.Symlink("p", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	want := func() Stat {
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		return StatOf(fi)
	}
	for _, rel := range []string{"p/plugin.json", "link/plugin.json"} {
		got, err := d.StatAt(rel)
		if err != nil || got != want() {
			t.Errorf("StatAt(%q) = %+v, %v; want %+v", rel, got, err, want())
		}
	}
	before, _ := d.StatAt("p/plugin.json")
	later := time.Now().Add(time.Hour)
	if err := os.WriteFile(file, []byte(`{"a":22}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	if after, err := d.StatAt("p/plugin.json"); err != nil || after == before || after != want() {
		t.Errorf("after a rewrite: StatAt = %+v, %v; before %+v, want %+v", after, err, before, want())
	}
	_, err = d.StatAt("p/missing.json")
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != filepath.Join(root, "p", "missing.json") {
		t.Errorf("StatAt(missing) = %v; want a path error wrapping fs.ErrNotExist naming %s", err, filepath.Join(root, "p", "missing.json"))
	}
}
