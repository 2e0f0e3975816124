package sidecar

import (
	"os"
	"syscall"
	"unsafe"
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
	// The poller is edge-triggered and RawConn.Read forgets a readiness
	// seen before it starts: each round asks the descriptor itself, so an
	// exit before the wait is seen here and one after it wakes the wait.
	_ = rc.Read(func(fd uintptr) bool { return readable(fd) })
}

// readable reports whether fd is readable now (ppoll with a zero timeout);
// an error counts as readable, so that the caller stops waiting and
// cmd.Wait decides.
func readable(fd uintptr) bool {
	pfd := struct {
		fd      int32
		events  int16
		revents int16
	}{fd: int32(fd), events: 0x1} // POLLIN
	var zero syscall.Timespec
	n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	return errno != 0 || n > 0
}
