//go:build linux && !extkernel_portable

package process

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// Stamp tells, without reading a file, that its content may have changed:
// the status-change time moves on every write or truncation (and on
// changes of mode and links), and no unprivileged process can set it
// back. Stamps compare with ==.
type Stamp struct {
	ctime syscall.Timespec
	size  int64
}

// StampOf returns f's Stamp.
func StampOf(f *os.File) (Stamp, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return Stamp{}, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	return Stamp{ctime: st.Ctim, size: st.Size}, nil
}

// ExecPath returns the path that execs the open file f, which was read
// from path: /proc/self/fd/N, so that the kernel runs the very file that
// was hashed even if path now names another. The descriptor is
// close-on-exec, which is fine for a binary (the kernel has opened it by
// the time it closes descriptors) but not for a script: the interpreter a
// "#!" line names reopens the path it is given, which is closed by then.
// So a script, or a system without /proc, gets path back, and with it the
// window between check and exec.
func ExecPath(f *os.File, path string) string {
	var magic [2]byte
	if n, _ := f.ReadAt(magic[:], 0); n == 2 && bytes.Equal(magic[:], []byte("#!")) {
		return path
	}
	fdPath := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if _, err := os.Stat(fdPath); err != nil {
		return path
	}
	return fdPath
}
