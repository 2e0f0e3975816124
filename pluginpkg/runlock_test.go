//go:build unix

package pluginpkg

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRunLockHelper is not a test: run by TestRunLock as a separate process,
// it takes the run lock of $RUNLOCK_HOME, says so on stdout and waits to be
// killed.
func TestRunLockHelper(t *testing.T) {
	home := os.Getenv("RUNLOCK_HOME")
	if home == "" {
		t.Skip("helper process")
	}
	if _, err := LockRun(home); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
	os.Exit(0)
}

// TestRunLock takes a home's run lock in another process, checks that it is
// refused here with that process's pid, kills the holder with SIGKILL, and
// checks that the lock it left is recovered and reported as stale.
func TestRunLock(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunLockHelper$")
	cmd.Env = append(os.Environ(), "RUNLOCK_HOME="+home)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper said %q, %v", line, err)
	}

	_, err = LockRun(home)
	var le *RunLockedError
	if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		t.Fatalf("LockRun while held = %v, want a *RunLockedError naming pid %d", err, cmd.Process.Pid)
	}
	want := fmt.Sprintf("home %s is in use by another kernel (pid %d)", home, cmd.Process.Pid)
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}

	cmd.Process.Kill()
	cmd.Wait()
	l, err := LockRun(home)
	if err != nil {
		t.Fatalf("LockRun after the holder died: %v", err)
	}
	if l.StalePID() != cmd.Process.Pid {
		t.Errorf("StalePID = %d, want %d", l.StalePID(), cmd.Process.Pid)
	}
	if _, err := LockRun(home); !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Errorf("second LockRun in this process = %v, want refused naming pid %d", err, os.Getpid())
	}
	l.Unlock()
	l.Unlock() // idempotent
	l2, err := LockRun(home)
	if err != nil || l2.StalePID() != 0 {
		t.Fatalf("LockRun after Unlock = %v (stale %d), want a clean lock", err, l2.StalePID())
	}
	l2.Unlock()
	if fi, err := os.Stat(filepath.Join(home, RunDir)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("run dir: %v, %v; want mode 0700", fi, err)
	}
}
