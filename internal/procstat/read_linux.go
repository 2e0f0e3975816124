package procstat

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// readInto reads the start of the file at path into buf (as much as fits)
// with the descriptor's system calls alone: no *os.File, whose poller
// registration a /proc file refuses, for files read by the hundred. A
// call a signal interrupts is made again.
func readInto(path string, buf []byte) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	for err == unix.EINTR {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return 0, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, &fs.PathError{Op: "read", Path: path, Err: err}
		case m == 0:
			return n, nil
		}
		n += m
	}
	return n, nil
}
