//go:build !linux

package sidecar

import "syscall"

// requestPidfd returns nil outside Linux: there is no pidfd.
func requestPidfd(*syscall.SysProcAttr) *int { return nil }

// awaitExit returns at once outside Linux: cmd.Wait blocks in wait(2).
func awaitExit(*int) {}
