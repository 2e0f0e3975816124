//go:build linux && !extkernel_portable

package process

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestPipeEnds checks that pipe makes the host's end non-blocking and
// polled (deadlines work) and leaves the child's blocking and unpolled.
func TestPipeEnds(t *testing.T) {
	for hostEnd := range 2 {
		r, w, inode, err := pipe(hostEnd)
		if err != nil {
			t.Fatal(err)
		}
		if inode == 0 {
			t.Errorf("host end %d: no pipe inode", hostEnd)
		}
		host, child := r, w
		if hostEnd == 1 {
			host, child = w, r
		}
		if err := host.SetDeadline(time.Now().Add(time.Hour)); err != nil {
			t.Errorf("host end %d: SetDeadline: %v, want a polled file", hostEnd, err)
		}
		if err := child.SetDeadline(time.Now().Add(time.Hour)); !errors.Is(err, os.ErrNoDeadline) {
			t.Errorf("child end: SetDeadline: %v, want os.ErrNoDeadline (not polled)", err)
		}
		for _, f := range []struct {
			file        *os.File
			nonBlocking bool
		}{{host, true}, {child, false}} {
			rc, err := f.file.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			var flags int
			var ferr error
			if err := rc.Control(func(fd uintptr) {
				r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
				flags = int(r)
				if errno != 0 {
					ferr = errno
				}
			}); err != nil || ferr != nil {
				t.Fatal(err, ferr)
			}
			if got := flags&syscall.O_NONBLOCK != 0; got != f.nonBlocking {
				t.Errorf("%s (host end %d): non-blocking %v, want %v", f.file.Name(), hostEnd, got, f.nonBlocking)
			}
		}
		if _, err := w.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if b := make([]byte, 2); true {
			if n, err := r.Read(b); n != 1 || err != nil {
				t.Fatalf("read %d, %v", n, err)
			}
		}
		r.Close()
		w.Close()
	}
}

// TestGrowStdout: GrowStdout gives the stdout pipe the room asked for
// (within pipe-max-size), leaves the host's end non-blocking and polled,
// and a second call, with room enough already, changes nothing.
func TestGrowStdout(t *testing.T) {
	r, w, _, err := pipe(0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	p := &Process{Stdout: r}
	size := func() int {
		rc, err := r.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if err := rc.Control(func(fd uintptr) {
			v, _, _ := syscall.Syscall(syscall.SYS_FCNTL, fd, 1032 /* F_GETPIPE_SZ */, 0)
			n = int(v)
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const want = 256 << 10 // below the default pipe-max-size (1 MiB)
	if !p.GrowStdout(want) {
		t.Fatalf("GrowStdout(%d) = false; pipe holds %d", want, size())
	}
	if got := size(); got < want {
		t.Errorf("pipe holds %d after GrowStdout(%d)", got, want)
	}
	if !p.GrowStdout(want / 2) {
		t.Errorf("GrowStdout(%d) = false with %d already", want/2, size())
	}
	if got := size(); got < want {
		t.Errorf("pipe shrank to %d", got)
	}
	if err := r.SetDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Errorf("SetDeadline after GrowStdout: %v, want the end still polled", err)
	}
}
