// Package homefile reads the files of an extkernel home (state.json,
// manifests, snapshots) and the host config with a size limit, refusing
// anything that is not a regular file.
//
// A home is edited by hand and by tools, so any of its files may turn into
// a link to /dev/zero, a FIFO, a directory or a file of gigabytes. os.ReadFile
// would block on the FIFO and read the others until memory runs out. Read
// never blocks on the open, never reads a non-regular file and never holds
// more than limit+1 bytes of a file in memory.
//
// # Errors
//
// Read and Open return the *fs.PathError of the open or stat as it is (so
// errors.Is(err, fs.ErrNotExist) works), or an *Error naming the file that
// wraps ErrNotRegular or (Read only) ErrTooLarge.
package homefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

var (
	// ErrNotRegular is wrapped by Read's error when the path (after
	// following symbolic links) is a directory, device, FIFO, socket or
	// anything else but a regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge is wrapped by Read's error when the file holds more than
	// the limit.
	ErrTooLarge = errors.New("larger than the limit")
)

// Error is a file Read refuses: its path, the sentinel (ErrNotRegular or
// ErrTooLarge) and what was found.
type Error struct {
	// Path is the path given to Read.
	Path string
	// Err is ErrNotRegular or ErrTooLarge.
	Err error
	// Detail completes Err: the file type, or the limit.
	Detail string
}

// Error formats the refusal as "path: reason".
func (e *Error) Error() string { return e.Path + ": " + e.Reason() }

// Reason is the refusal without the path, e.g. "not a regular file (a
// FIFO)" or "larger than the limit of 4 MiB".
func (e *Error) Reason() string { return e.Err.Error() + e.Detail }

// Unwrap returns ErrNotRegular or ErrTooLarge.
func (e *Error) Unwrap() error { return e.Err }

// Read returns the contents of the regular file at path, which must hold at
// most limit bytes. Symbolic links are followed; their target must be a
// regular file too. The file is opened non-blocking, so a FIFO cannot block
// the open, and the type and size are checked on the opened descriptor
// (fstat) before anything is read. At most limit+1 bytes are read, whatever
// the file's reported size.
func Read(path string, limit int64) ([]byte, error) {
	return readFile(path, limit)
}

// readAll reads r to its end into a buffer of size bytes at first (a file
// of its reported size, plus one byte to find the end), grown only when r
// holds more (as os.ReadFile does, without its spare 512 bytes: a host
// reads every manifest at each start).
func readAll(r io.Reader, size int) ([]byte, error) {
	data := make([]byte, 0, size)
	for {
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// Open opens the regular file at path for reading, following symbolic
// links, and returns it with its fstat. It opens non-blocking, so a FIFO
// cannot block the open, and refuses anything but a regular file with an
// *Error wrapping ErrNotRegular; nothing is read. For files read whole, use
// Read; Open is for files streamed with a bound of their own (an
// executable being hashed). The caller closes the file.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &Error{Path: path, Err: ErrNotRegular, Detail: " (" + typeName(fi.Mode()) + ")"}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

func tooLarge(path string, limit int64) error {
	return &Error{Path: path, Err: ErrTooLarge, Detail: " of " + Size(limit)}
}

// TypeName names a file type that is not a regular file, for messages: "a
// FIFO", "a socket", "a character device", "a directory", ...
func TypeName(m fs.FileMode) string { return typeName(m) }

// typeName names a non-regular file type for messages.
func typeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "file type " + m.Type().String()
}

// Size formats a byte count for messages and documentation: "16 MiB",
// "512 KiB", or "1000 bytes" when it is not a whole number of KiB.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
