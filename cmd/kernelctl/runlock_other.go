//go:build !unix

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// runLockFree reports whether the run lock file at path records no holder:
// where flock is unavailable the lock only records the holder's pid, and
// RunLock.Unlock empties the file. A missing file is free.
func runLockFree(path string) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("run lock: %w", err)
	}
	return strings.TrimSpace(string(b)) == "", nil
}
