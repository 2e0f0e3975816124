//go:build !unix

package pluginpkg

import "os"

// flockFile is a no-op where flock is unavailable: writers in one process are
// still serialized by the in-process mutex, but not across processes.
func flockFile(*os.File) error { return nil }

func funlockFile(*os.File) error { return nil }
