//go:build unix

package confine

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// canKeep: a kept ${tmp} can be locked here (flock), so HoldTmp tries it.
const canKeep = true

// openDir opens dir itself, not what a symbolic link there points to.
func openDir(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// lockDir takes f's exclusive flock without waiting: errTmpBusy when
// another open of the directory holds it. The lock lives as long as f's
// open file description, which no child inherits (close-on-exec).
func lockDir(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EWOULDBLOCK):
		return errTmpBusy
	case errors.Is(err, unix.ENOTSUP), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL):
		return errors.ErrUnsupported // a file system without flock
	default:
		return fmt.Errorf("lock: %w", err)
	}
}
