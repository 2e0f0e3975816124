//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminalWidth returns the columns of the terminal f, or ok false when
// the system does not report them.
func terminalWidth(f *os.File) (cols int, ok bool) {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 0, false
	}
	return int(ws.Col), true
}
