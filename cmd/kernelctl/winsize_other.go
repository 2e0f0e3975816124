//go:build !unix

package main

import "os"

// terminalWidth reports ok false: this system's terminal size is not
// queried, and the printer keeps its default of 80 columns.
func terminalWidth(*os.File) (cols int, ok bool) { return 0, false }
