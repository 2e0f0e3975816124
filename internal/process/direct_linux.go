//go:build linux && !extkernel_portable

package process

import (
	"os"
	"syscall"
)

// Portable reports whether this build uses the portable fallbacks (see
// the package documentation, "Platforms").
const Portable = false

// DirectWriter writes frames to a non-blocking pipe from the caller's
// goroutine without ever blocking it: what the pipe takes at once. It is
// used by one goroutine at a time (the holder of the right to write);
// the function it hands to syscall.RawConn.Write is allocated once.
type DirectWriter struct {
	rc    syscall.RawConn
	frame []byte
	n     int                   // bytes of frame written
	write func(fd uintptr) bool // d.writeFD, bound once
}

// NewDirectWriter returns the direct writer of f, or nil when f is not in
// non-blocking mode, where a direct write could block the caller. The
// host's end of a pipe Start made is.
func NewDirectWriter(f *os.File) *DirectWriter {
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
	d := &DirectWriter{rc: rc}
	d.write = d.writeFD
	return d
}

// Write writes as much of frame as the pipe takes without blocking and
// returns how much that was. Any error (a full pipe, a closed or broken
// pipe) ends the write early; the caller's writer goroutine writes the
// rest and reports it.
func (d *DirectWriter) Write(frame []byte) int {
	d.frame, d.n = frame, 0
	_ = d.rc.Write(d.write)
	n := d.n
	d.frame = nil
	return n
}

// writeFD writes d.frame[d.n:] to fd until it is all written or the pipe
// takes no more, and never asks to wait for the pipe.
func (d *DirectWriter) writeFD(fd uintptr) bool {
	for d.n < len(d.frame) {
		m, err := syscall.Write(int(fd), d.frame[d.n:])
		if m > 0 {
			d.n += m
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
	}
	return true
}
