//go:build !linux

package main

// confineEnforced reports false: confinement is implemented on Linux only.
func confineEnforced() bool { return false }
