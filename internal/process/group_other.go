//go:build !unix

package process

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
)

const (
	sigTerm = syscall.Signal(15)
	sigKill = syscall.Signal(9)
)

// Supported returns an error wrapping errors.ErrUnsupported: a plugin's
// process tree would need a job object here, which is not implemented.
func Supported() error {
	return fmt.Errorf("plugin processes are not supported on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

func groupAttr() *syscall.SysProcAttr { return nil }

func signalGroup(int, syscall.Signal) error { return Supported() }

func reapGroup(int) {}
