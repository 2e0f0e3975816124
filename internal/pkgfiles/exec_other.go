//go:build !unix

package pkgfiles

import "io/fs"

// executable is false where exec.LookPath decides by more than the file
// (Windows: extensions): Ref.CommandPath decides there.
func executable(string, fs.FileInfo) bool { return false }
