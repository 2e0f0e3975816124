//go:build unix

package pkgfiles

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// executable reports whether this process may execute the regular file at
// path (lstat fi), as exec.LookPath decides it: an access check with the
// effective IDs, or, where the system has none, any execute bit.
func executable(path string, fi fs.FileInfo) bool {
	err := unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, unix.AT_EACCESS)
	if err == nil {
		return true
	}
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return fi.Mode()&0o111 != 0
	}
	return false
}
