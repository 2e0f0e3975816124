//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSystemDirsHeld: the system directories are held once each (a
// symbolic link to another is covered by its descriptor), and a policy
// uses them only when it reads all of them: one whose deny took a system
// directory away has its rules made path by path.
func TestSystemDirsHeld(t *testing.T) {
	h := systemDirs()
	if len(h.dirs) == 0 {
		t.Skip("no system directory here")
	}
	var paths []string
	for _, d := range h.dirs {
		paths = append(paths, d.path)
	}
	for path := range h.covered {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			t.Fatal(err)
		}
		if real != path && slices.Contains(paths, real) && slices.Contains(paths, path) {
			t.Errorf("%s and %s (its target) are both held", path, real)
		}
		if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
			t.Errorf("%s is held but is no directory: %v", path, err)
		}
	}
	full := &Policy{Read: append(systemReadable(), "/srv/plugin")}
	if !full.holdsSystemDirs() {
		t.Error("a policy reading every system directory does not use the held ones")
	}
	denied := &Policy{Read: slices.DeleteFunc(slices.Clone(full.Read), func(p string) bool { return p == h.dirs[0].path })}
	if denied.holdsSystemDirs() {
		t.Errorf("a policy without %s uses the held directories", h.dirs[0].path)
	}
}
