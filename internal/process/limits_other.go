//go:build !linux || extkernel_portable

package process

import "errors"

const (
	rlimitNOFILE = iota
	rlimitAS
)

// LimitsSupported reports whether SetLimits can apply limits here.
const LimitsSupported = false

func setLimit(int, int, uint64) error { return errors.ErrUnsupported }
