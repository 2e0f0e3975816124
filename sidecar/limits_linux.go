package sidecar

import "golang.org/x/sys/unix"

const (
	rlimitNOFILE = unix.RLIMIT_NOFILE
	rlimitAS     = unix.RLIMIT_AS
)

// limitsSupported reports whether Options.Limits can be applied here.
const limitsSupported = true

// setLimit sets both the soft and the hard limit of resource for pid.
func setLimit(pid, resource int, value uint64) error {
	return unix.Prlimit(pid, resource, &unix.Rlimit{Cur: value, Max: value}, nil)
}
