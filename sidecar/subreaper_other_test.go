//go:build !linux

package sidecar

// becomeSubreaper does nothing outside Linux: orphaned grandchildren of
// plugins go to init, and the tests that look for them need /proc anyway.
func becomeSubreaper() error { return nil }
