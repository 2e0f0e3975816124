//go:build !unix

package pluginpkg

import "io/fs"

// repairRunDir does nothing where file modes do not apply: the link and
// type checks of PrepareRunDir are all that hold.
func repairRunDir(string, fs.FileInfo) (string, error) { return "", nil }
