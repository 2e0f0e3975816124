//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// TestSystemHeld: the system paths are held once each (a symbolic link
// to another is covered by its descriptor), files and devices as well as
// directories, and a policy uses them only when it reads and grants all
// of them: one that lacks one has its rules made path by path.
func TestSystemHeld(t *testing.T) {
	h := systemHeld()
	if len(h.entries) == 0 {
		t.Skip("no system path here")
	}
	var dirs []string
	files := 0
	for _, e := range h.entries {
		if e.dir {
			dirs = append(dirs, e.path)
		} else {
			files++
		}
	}
	if files == 0 {
		t.Error("no system file or device is held")
	}
	for path := range h.read {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			t.Fatal(err)
		}
		if real != path && slices.Contains(dirs, real) && slices.Contains(dirs, path) {
			t.Errorf("%s and %s (its target) are both held", path, real)
		}
	}
	for path := range h.devices {
		if h.read[path] {
			t.Errorf("%s is held as a device and as a readable file", path)
		}
	}
	full := &Policy{Read: append(systemReadable(), "/srv/plugin"), Devices: systemDevices()}
	if !full.holdsSystem() {
		t.Error("a policy reading every system path does not use the held ones")
	}
	lacking := &Policy{Read: slices.DeleteFunc(slices.Clone(full.Read), func(p string) bool { return p == dirs[0] }), Devices: full.Devices}
	if lacking.holdsSystem() {
		t.Errorf("a policy without %s uses the held paths", dirs[0])
	}
	noDevices := &Policy{Read: full.Read}
	if len(h.devices) > 0 && noDevices.holdsSystem() {
		t.Error("a policy without the devices uses the held ones")
	}
}

// TestHeldFileReplaced: a held file replaced by rename is granted as the
// path now names it, not as the descriptor held: a thread restricted with
// the rule reads the new file and not the old one (kept under another
// name by a hard link); a held file removed grants nothing and fails
// nothing.
func TestHeldFileReplaced(t *testing.T) {
	if landlockABI() < 1 {
		t.Skip("no Landlock here")
	}
	dir := t.TempDir()
	path, old, next := filepath.Join(dir, "resolv.conf"), filepath.Join(dir, "old"), filepath.Join(dir, "next")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := holdForTest(t, path)
	if err := os.Link(path, old); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(next, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	gone := holdForTest(t, filepath.Join(dir, "gone"))
	if err := os.Remove(gone.path); err != nil {
		t.Fatal(err)
	}

	got := make(chan [2]error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the restricted thread ends with this goroutine
		fail := func(err error) { got <- [2]error{err, err} }
		handled := landlock.AccessFSSet(ll.AccessFSReadFile)
		attr := ll.RulesetAttr{HandledAccessFS: uint64(handled)}
		fd, err := ll.LandlockCreateRuleset(&attr, 0)
		if err != nil {
			fail(err)
			return
		}
		defer unix.Close(fd)
		for _, h := range []heldEntry{e, gone} {
			if err := h.addRule(fd, handled); err != nil {
				fail(err)
				return
			}
		}
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			fail(err)
			return
		}
		if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
			fail(err)
			return
		}
		_, errNew := readThread(path)
		_, errOld := readThread(old)
		got <- [2]error{errNew, errOld}
	}()
	res := <-got
	if res[0] != nil {
		t.Errorf("reading the replaced file through its path: %v, want it granted", res[0])
	}
	if res[1] == nil {
		t.Error("the old file, no longer at the held path, is still readable")
	}
}

// holdForTest holds path as systemHeld holds a system file.
func holdForTest(t *testing.T, path string) heldEntry {
	t.Helper()
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	return heldEntry{path: path, fd: fd, dev: uint64(st.Dev), ino: st.Ino}
}

// readThread reads path with raw system calls on the calling thread (the
// os package's may block and move to another thread).
func readThread(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	var buf [16]byte
	return unix.Read(fd, buf[:])
}
