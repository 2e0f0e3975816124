//go:build !linux

package sidecar

// awaitExit returns at once outside Linux: cmd.Wait blocks in wait(2).
func awaitExit(int) {}
