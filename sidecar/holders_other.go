//go:build !linux

package sidecar

// pipeInode returns 0 outside Linux: holders of a plugin's pipes are not
// looked for.
func pipeInode(int) uint64 { return 0 }

// killPipeHolders does nothing outside Linux, where there is no /proc to
// find the processes that hold a plugin's pipes: a helper that left the
// plugin's process group and keeps them open is not killed, and the host
// closes its ends after drainTimeout.
func killPipeHolders([]uint64) []int { return nil }
