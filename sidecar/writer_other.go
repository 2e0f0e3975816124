//go:build !linux

package sidecar

import (
	"os"
	"syscall"
)

// rawWriter returns nil outside Linux: every frame goes through the writer
// goroutine.
func rawWriter(*os.File) syscall.RawConn { return nil }
