//go:build !linux

package sidecar

import "errors"

const (
	rlimitNOFILE = iota
	rlimitAS
)

// limitsSupported reports whether Options.Limits can be applied here.
const limitsSupported = false

func setLimit(pid, resource int, value uint64) error {
	return errors.ErrUnsupported
}
