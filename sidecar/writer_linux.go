package sidecar

import (
	"os"
	"syscall"
)

// rawWriter returns the raw connection callers write f through directly
// (Client.send), or nil when f is not in non-blocking mode, where a direct
// write could block the caller. The host's end of an os.Pipe is.
func rawWriter(f *os.File) syscall.RawConn {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nonblocking := false
	if err := rc.Control(func(fd uintptr) {
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblocking = errno == 0 && flags&syscall.O_NONBLOCK != 0
	}); err != nil || !nonblocking {
		return nil
	}
	return rc
}
