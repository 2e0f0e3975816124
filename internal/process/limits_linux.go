//go:build linux && !extkernel_portable

package process

import "golang.org/x/sys/unix"

const (
	rlimitNOFILE = unix.RLIMIT_NOFILE
	rlimitAS     = unix.RLIMIT_AS
)

// LimitsSupported reports whether SetLimits can apply limits here.
const LimitsSupported = true

// setLimit sets both the soft and the hard limit of resource for pid.
func setLimit(pid, resource int, value uint64) error {
	return unix.Prlimit(pid, resource, &unix.Rlimit{Cur: value, Max: value}, nil)
}
