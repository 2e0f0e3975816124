//go:build linux && !extkernel_portable

package process

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// awaitExit returns once process pid, a child of the host not yet reaped,
// has exited, waiting parked in the runtime's poller (a pidfd becomes
// readable when its process exits) instead of in a thread blocked in
// waitid(2): the exit watcher of each running plugin then costs no thread,
// and its start no hand-off of a blocked thread's P. Without a pidfd, or
// if it cannot be polled, it returns at once and cmd.Wait blocks as
// before.
//
// The pidfd is one of its own, opened non-blocking (PIDFD_NONBLOCK), never
// the one os/exec waits on: O_NONBLOCK belongs to the open file, which a
// duplicate shares, and waitid(2) on a non-blocking pidfd of a running
// process fails with EAGAIN instead of waiting. An earlier version set
// O_NONBLOCK on the pidfd exec handed out (SysProcAttr.PidFD), which
// os.Process waits on through a duplicate: whenever awaitExit returned
// early, cmd.Wait failed at once, with no exit status, and a running
// plugin was reported "exited unexpectedly (<nil>)".
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	awaitPidfd(fd)
}

// awaitPidfd waits in the runtime's poller until the process of fd, a
// non-blocking pidfd, has exited, and closes fd. It returns at once if fd
// cannot be polled.
func awaitPidfd(fd int) {
	f := os.NewFile(uintptr(fd), "pidfd")
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

// readable reports whether fd is readable now (ppoll with a zero timeout).
// A signal that interrupts the call (EINTR: the runtime's preemption
// signal, SIGCHLD) asks again; any other error counts as readable, so that
// the caller stops waiting and cmd.Wait, which blocks until the exit,
// decides.
func readable(fd uintptr) bool {
	for {
		n, errno := ppoll(fd)
		if errno == syscall.EINTR {
			continue
		}
		return errno != 0 || n > 0
	}
}

// ppoll polls fd for POLLIN with a zero timeout and returns ppoll(2)'s
// result. It is a variable so that a test can interrupt it.
var ppoll = func(fd uintptr) (uintptr, syscall.Errno) {
	pfd := struct {
		fd      int32
		events  int16
		revents int16
	}{fd: int32(fd), events: 0x1} // POLLIN
	var zero syscall.Timespec
	n, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
	return n, errno
}
