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

// errLockBusy is returned by tryFlockFile when another process holds the lock.
var errLockBusy = errors.New("lock held by another process")

// tryFlockFile takes an exclusive flock on f without blocking, retrying on
// EINTR; it returns errLockBusy when another open file description holds it.
func tryFlockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLockBusy
		}
		return err
	}
}
