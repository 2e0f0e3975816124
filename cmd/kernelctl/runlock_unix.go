//go:build unix

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// runLockFree reports whether no process holds the run lock file at path
// (pluginpkg.LockRun's exclusive flock): it takes a shared flock without
// waiting and releases it at once. A missing file is free.
func runLockFree(path string) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("run lock: %w", err)
	}
	defer f.Close()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case err != nil:
			return false, fmt.Errorf("run lock %s: %w", path, err)
		}
		return true, nil // closing f releases the shared lock
	}
}
