package sidecar

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// startWithPidfd starts name with args and a pidfd, or skips the test
// when the kernel gives none.
func startWithPidfd(t *testing.T, name string, args ...string) (*exec.Cmd, *int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	pidfd := requestPidfd(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if *pidfd < 0 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Skip("the kernel gives no pidfd")
	}
	return cmd, pidfd
}

// awaitExitWithin runs awaitExit and fails the test if it has not
// returned within bound.
func awaitExitWithin(t *testing.T, pidfd *int, bound time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		awaitExit(pidfd)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatalf("awaitExit did not return within %v of the process's exit", bound)
	}
}

// TestAwaitExit checks that awaitExit waits for the process behind the
// pidfd exec hands out, and returns once it is killed (before it is
// reaped), and that it returns at once without a pidfd.
func TestAwaitExit(t *testing.T) {
	awaitExit(nil)
	cmd, pidfd := startWithPidfd(t, "sleep", "30")
	done := make(chan struct{})
	go func() {
		awaitExit(pidfd)
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("awaitExit returned while the process runs")
	case <-time.After(50 * time.Millisecond):
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("awaitExit did not return after the process was killed")
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the killed process exited cleanly")
	}
}

// TestAwaitExitAfterExit checks a process that exited before awaitExit
// started: its pidfd is already readable when it is registered with the
// poller, and no later event will come (an early version waited for one
// forever, which hung kernelctl's tests once in CI).
func TestAwaitExitAfterExit(t *testing.T) {
	// Goroutines that keep the runtime polling, so that the exit's event
	// is often consumed before awaitExit starts to wait.
	stop := make(chan struct{})
	defer close(stop)
	for range 2 {
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Microsecond):
				}
			}
		}()
	}
	for range 200 {
		cmd, pidfd := startWithPidfd(t, "true")
		for deadline := time.Now().Add(10 * time.Second); ; {
			if _, _, state, ok := procStat(cmd.Process.Pid); ok && state == "Z" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the process did not exit")
			}
			time.Sleep(time.Millisecond)
		}
		awaitExitWithin(t, pidfd, 10*time.Second)
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}
