package sidecar

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestAwaitExit checks that awaitExit waits for the process behind the
// pidfd exec hands out, and returns once it is killed (before it is
// reaped), and that it returns at once without a pidfd.
func TestAwaitExit(t *testing.T) {
	awaitExit(nil)
	cmd := exec.Command("sleep", "30")
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
