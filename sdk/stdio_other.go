//go:build !linux

package sdk

import "os"

// pollStdio returns os.Stdin and os.Stdout: outside Linux, Serve uses them
// as they are.
func pollStdio() (in, out *os.File) { return os.Stdin, os.Stdout }
