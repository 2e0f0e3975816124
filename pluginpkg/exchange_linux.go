package pluginpkg

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exchangeDirs atomically swaps the directories (or links) at a and b with
// renameat2(RENAME_EXCHANGE). It returns errNoExchange when the kernel or
// the file system cannot (ENOSYS, EINVAL), so that the caller falls back to
// two renames.
func exchangeDirs(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EINVAL), errors.Is(err, unix.EOPNOTSUPP):
		return errNoExchange
	}
	return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
}
