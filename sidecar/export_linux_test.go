//go:build linux && !extkernel_portable

package sidecar

import ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

// landlockABIForTest returns the running kernel's Landlock ABI, 0 for none.
func landlockABIForTest() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}
