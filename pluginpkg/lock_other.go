//go:build !unix

package pluginpkg

import (
	"errors"
	"os"
)

// flockFile is a no-op where flock is unavailable: writers in one process are
// still serialized by the in-process mutex, but not across processes.
func flockFile(*os.File) error { return nil }

func funlockFile(*os.File) error { return nil }

// errLockBusy would report a lock held by another process; without flock it
// is never returned.
var errLockBusy = errors.New("lock held by another process")

// tryFlockFile is a no-op where flock is unavailable.
func tryFlockFile(*os.File) error { return nil }
