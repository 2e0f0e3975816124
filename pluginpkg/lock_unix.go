//go:build unix

package pluginpkg

import (
	"errors"
	"os"
	"syscall"
)

// flockFile takes an exclusive flock on f, retrying on EINTR. It blocks
// until the lock is free.
func flockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// funlockFile releases the flock on f.
func funlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
