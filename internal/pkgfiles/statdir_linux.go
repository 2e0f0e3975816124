package pkgfiles

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// Dir is an open directory whose files are stat'ed by a path relative to
// it (StatAt): the kernel walks only the relative path's components, not
// the directory's own path again, which is what a whole-home load pays 64
// times for 64 packages. Close releases it.
type Dir struct {
	path string
	fd   int
}

// OpenDir opens the directory path for StatAt. On error the caller stats
// by full path instead (Dir is an optimization, never a requirement).
func OpenDir(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &Dir{path: path, fd: fd}, nil
}

// StatAt returns the version (Stat) of the file at rel, a slash-separated
// path relative to d, following symbolic links as os.Stat does.
func (d *Dir) StatAt(rel string) (Stat, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, rel, &st, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Stat{}, &fs.PathError{Op: "stat", Path: d.path + "/" + rel, Err: err}
		}
		break
	}
	return Stat{Size: st.Size, Mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec, Ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec, Ino: st.Ino}, nil
}

// Close closes d.
func (d *Dir) Close() error { return unix.Close(d.fd) }
