package sidecar

import (
	"os"
	"syscall"
)

// requestPidfd asks exec for a pidfd of the child (SysProcAttr.PidFD) and
// returns where it will be stored: -1 when the kernel has none.
func requestPidfd(attr *syscall.SysProcAttr) *int {
	fd := -1
	attr.PidFD = &fd
	return &fd
}

// awaitExit returns once the process of *pidfd has exited, waiting parked
// in the runtime's poller (a pidfd becomes readable when its process
// exits) instead of in a thread blocked in waitid(2): the exit watcher of
// each running plugin then costs no thread, and its start no hand-off of
// a blocked thread's P. It closes the pidfd. Without a pidfd, or if it
// cannot be polled, it returns at once and cmd.Wait blocks as before.
func awaitExit(pidfd *int) {
	if pidfd == nil || *pidfd < 0 {
		return
	}
	if err := syscall.SetNonblock(*pidfd, true); err != nil {
		_ = syscall.Close(*pidfd)
		return
	}
	f := os.NewFile(uintptr(*pidfd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	polled := false
	_ = rc.Read(func(uintptr) bool {
		if !polled {
			polled = true
			return false // not yet: wait until readable
		}
		return true
	})
}
