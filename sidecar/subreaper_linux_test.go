package sidecar

import (
	"fmt"
	"syscall"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER for prctl(2).
const prSetChildSubreaper = 36

// becomeSubreaper makes the test process a child subreaper: orphaned
// grandchildren of plugins become its children, so the tests can check
// that Close kills and reaps them rather than leaving them to init.
func becomeSubreaper() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", errno)
	}
	return nil
}
