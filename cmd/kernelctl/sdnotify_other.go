//go:build !unix

package main

// monotonicUsec reports no monotonic clock: MONOTONIC_USEC is left out.
func monotonicUsec() (uint64, bool) { return 0, false }
