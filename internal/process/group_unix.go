//go:build unix

package process

import (
	"errors"
	"fmt"
	"syscall"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// Supported returns nil: plugin processes run on every Unix system.
func Supported() error { return nil }

// groupAttr puts the child in a process group of its own.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup sends sig to process group pgid. A group that no longer
// exists is not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if err := syscall.Kill(-pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal process group %d: %w", pgid, err)
	}
	return nil
}

// reapGroup waits for every child of the host still in process group
// pgid (see Process.Reap).
func reapGroup(pgid int) {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(-pgid, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil { // ECHILD: none left
			return
		}
	}
}
