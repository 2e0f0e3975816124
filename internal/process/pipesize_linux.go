//go:build linux && !extkernel_portable

package process

import "golang.org/x/sys/unix"

// GrowStdout asks the kernel to let the plugin's stdout pipe hold n bytes
// (F_SETPIPE_SZ, rounded up to a power of two pages), so that a plugin
// writing large frames (a stream's chunks) need not wait for the host to
// read each before it writes the next: fewer blocked writes and wake-ups
// on both sides. It reports whether the pipe now holds at least n. The
// host owns the pipe's end, so nothing changes for the plugin but the
// room. An unprivileged process may ask for up to
// /proc/sys/fs/pipe-max-size (1 MiB by default), and a user whose pipes
// hold more than the soft limit of pages gets a refusal: the pipe then
// keeps its size, which is only slower.
func (p *Process) GrowStdout(n int) bool {
	rc, err := p.Stdout.SyscallConn() // not Fd, which would make it blocking
	if err != nil {
		return false
	}
	size := -1
	if err := rc.Control(func(fd uintptr) {
		if cur, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err == nil && cur >= n {
			size = cur
			return
		}
		size, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, n)
	}); err != nil {
		return false
	}
	return size >= n
}
