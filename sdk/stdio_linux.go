package sdk

import (
	"os"
	"syscall"
)

// keptStdio holds the os.Stdin and os.Stdout that pollStdio replaced, so
// that their finalizers never close fds 0 and 1.
var keptStdio []*os.File

// pollStdio returns the files Serve reads and writes: fds 0 and 1 switched
// to non-blocking mode and opened again with os.NewFile, which registers
// them with the runtime's poller, so that a read waiting for the host parks
// a goroutine instead of blocking a thread in read(2) (the handler a
// request wakes then runs on the reader's thread). os.Stdin becomes the
// new input file. This is done only when both are pipes or sockets in
// blocking mode and neither is the file stderr writes to: the mode belongs
// to the open file, which a terminal or a stream shared with stderr would
// carry beyond the protocol. Otherwise, or if switching fails, it returns
// os.Stdin and os.Stdout as they are (already non-blocking files are
// already polled).
func pollStdio() (in, out *os.File) {
	in, out = os.Stdin, os.Stdout
	var st [3]syscall.Stat_t
	for fd := range st {
		if err := syscall.Fstat(fd, &st[fd]); err != nil {
			return in, out
		}
	}
	for fd := range 2 {
		mode := st[fd].Mode & syscall.S_IFMT
		if mode != syscall.S_IFIFO && mode != syscall.S_IFSOCK || sameFile(&st[fd], &st[2]) || !blocking(fd) {
			return in, out
		}
	}
	if err := syscall.SetNonblock(0, true); err != nil {
		return in, out
	}
	if err := syscall.SetNonblock(1, true); err != nil {
		_ = syscall.SetNonblock(0, false)
		return in, out
	}
	keptStdio = append(keptStdio, os.Stdin, os.Stdout)
	in, out = os.NewFile(0, "/dev/stdin"), os.NewFile(1, "/dev/stdout")
	os.Stdin = in
	return in, out
}

func sameFile(a, b *syscall.Stat_t) bool { return a.Dev == b.Dev && a.Ino == b.Ino }

// blocking reports whether fd is in blocking mode.
func blocking(fd int) bool {
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	return errno == 0 && flags&syscall.O_NONBLOCK == 0
}
