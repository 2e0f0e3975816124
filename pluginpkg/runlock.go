package pluginpkg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RunDir is the directory of a home that holds what exists only while a
// kernel runs on it: the run lock and, for kernelctl, the admin socket.
const RunDir = "run"

// runLockFile is the run lock's name in RunDir.
const runLockFile = "kernel.lock"

// maxRunLockSize bounds how much of a run lock file is read for its pid.
const maxRunLockSize = 64

// RunLock is the lock a kernel holds on its home for its whole lifetime, so
// that two kernels never start the same packages with one state and data
// directory. It is separate from the short lock that state writers take
// (Enable, Disable, Pin, Install, Remove), which keep working while a
// kernel runs. The zero value is not usable; get one from LockRun.
type RunLock struct {
	f *os.File
	// stale is the pid a previous holder left in the file, when that
	// holder is gone; zero otherwise.
	stale int
	// note says how the run directory was repaired; "" when it was not.
	note string
}

// RunLockedError reports that another process holds a home's run lock.
type RunLockedError struct {
	// Home is the home's absolute path.
	Home string
	// PID is the holder's process id, as it recorded it; zero when it
	// recorded none that could be read.
	PID int
}

// Error returns `home /h is in use by another kernel (pid 123)`.
func (e *RunLockedError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("home %s is in use by another kernel", e.Home)
	}
	return fmt.Sprintf("home %s is in use by another kernel (pid %d)", e.Home, e.PID)
}

// LockRun takes home's run lock without waiting: it prepares <home>/run
// with PrepareRunDir (refusing a symbolic link, making a directory
// writable by others private, which Note then reports), creates
// <home>/run/kernel.lock, locks it (an exclusive flock, which the
// operating system releases when the holder exits, however it exits) and
// writes the caller's pid into it. When another process holds it, LockRun returns a
// *RunLockedError naming that process. A lock file left by a process that
// is gone is taken over; StalePID then reports the pid it named, so that
// the caller can say it recovered. Where flock is unavailable (not unix),
// the lock only records the pid and does not exclude other processes.
//
// The caller MUST call Unlock when its kernel stops.
func LockRun(home string) (*RunLock, error) {
	home, err := filepath.Abs(home)
	if err != nil {
		return nil, fmt.Errorf("lock run: %w", err)
	}
	dir := filepath.Join(home, RunDir)
	note, err := PrepareRunDir(dir)
	if err != nil {
		return nil, fmt.Errorf("lock run: %w", err)
	}
	path := filepath.Join(dir, runLockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock run: %w", err)
	}
	prev := readPID(f)
	if err := tryFlockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errLockBusy) {
			return nil, &RunLockedError{Home: home, PID: prev}
		}
		return nil, fmt.Errorf("lock run %s: %w", path, err)
	}
	l := &RunLock{f: f, note: note}
	if prev != 0 && prev != os.Getpid() {
		l.stale = prev
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		l.Unlock()
		return nil, fmt.Errorf("lock run %s: %w", path, err)
	}
	return l, nil
}

// StalePID returns the pid recorded by a previous holder that exited
// without unlocking (its lock was recovered), or zero.
func (l *RunLock) StalePID() int { return l.stale }

// Note returns PrepareRunDir's note when LockRun made a run directory
// that was writable by its group or others private, or "".
func (l *RunLock) Note() string { return l.note }

// Unlock releases the run lock and removes the pid it recorded. It is
// idempotent.
func (l *RunLock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Truncate(0)
	funlockFile(l.f)
	l.f.Close()
	l.f = nil
}

// readPID returns the pid recorded in f, or zero when it holds none.
func readPID(f *os.File) int {
	b := make([]byte, maxRunLockSize)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
