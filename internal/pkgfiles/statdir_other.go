//go:build !linux

package pkgfiles

import (
	"os"
	"path/filepath"
)

// Dir is a directory whose files are stat'ed by a path relative to it
// (StatAt). Where there is no directory-relative stat it holds the path,
// and StatAt stats by full path. Close releases it.
type Dir struct{ path string }

// OpenDir returns the directory path for StatAt.
func OpenDir(path string) (*Dir, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	return &Dir{path: path}, nil
}

// StatAt returns the version (Stat) of the file at rel, a slash-separated
// path relative to d, following symbolic links as os.Stat does.
func (d *Dir) StatAt(rel string) (Stat, error) {
	return StatPath(filepath.Join(d.path, filepath.FromSlash(rel)))
}

// Close releases d.
func (d *Dir) Close() error { return nil }
