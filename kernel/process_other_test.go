//go:build !unix

package kernel

import "os"

// alive reports whether process pid can be opened. Without kill(2) this is
// an approximation; the tests that call it start plugins, which
// sidecar.Start refuses on these systems.
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
