//go:build !linux || extkernel_portable

package process

import "os"

// ExecPath returns path here: the executable is exec'd by path, and a file
// swapped in between the check and the exec runs unverified.
func ExecPath(_ *os.File, path string) string { return path }

// Stamp is empty here: an executable is exec'd by path, so a check of the
// descriptor would prove nothing.
type Stamp struct{}

// StampOf returns the empty Stamp.
func StampOf(*os.File) (Stamp, error) { return Stamp{}, nil }
