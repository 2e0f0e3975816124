package homefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"golang.org/x/sys/unix"
)

// readFile is Read with the descriptor's own system calls (open, fstat,
// read, close): an *os.File would also register the descriptor with the
// runtime's poller (a system call a regular file refuses) and allocate
// its FileInfo, and a host reads every manifest of its home when it
// starts. The errors are those of the os package: an *fs.PathError of the
// open or the fstat, with the errno inside.
func readFile(path string, limit int64) ([]byte, error) {
	fd, err := retryEINTR(func() (int, error) { return unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0) })
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if _, err := retryEINTR(func() (int, error) { return 0, unix.Fstat(fd, &st) }); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &Error{Path: path, Err: ErrNotRegular, Detail: " (" + typeName(modeType(st.Mode)) + ")"}
	}
	if st.Size > limit {
		return nil, tooLarge(path, limit)
	}
	data, err := readAll(io.LimitReader(fdReader(fd), limit+1), int(min(st.Size, limit))+1)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, limit)
	}
	return data, nil
}

// fdReader reads an open descriptor: io.EOF at its end.
type fdReader int

func (r fdReader) Read(p []byte) (int, error) {
	n, err := retryEINTR(func() (int, error) { return unix.Read(int(r), p) })
	switch {
	case err != nil:
		return 0, err
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	return n, nil
}

// retryEINTR calls f again while it is interrupted by a signal, as the
// os package does.
func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if !errors.Is(err, unix.EINTR) {
			return n, err
		}
	}
}

// modeType is the fs.FileMode type of a stat's mode.
func modeType(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}
