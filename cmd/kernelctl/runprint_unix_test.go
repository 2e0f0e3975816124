//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/extkernel/extkernel/admin"
)

// TestRunPrintsWarningsOnce runs the real kernelctl on the demo (whose
// generation has one warning), crashes memory and restarts audit: each
// republishes the generation with the same warning, which `run` showed in
// its summary and does not print again; the crash is printed once.
func TestRunPrintsWarningsOnce(t *testing.T) {
	buildDemo(t)
	home := filepath.Join(t.TempDir(), "home")
	copyDir(t, demoHome, home)
	os.RemoveAll(filepath.Join(home, "state")) // generation 1
	cmd, stdout, stderr, exited := startKernelctl(t, "run", "--home", home, "--config", demoConfig)

	c, err := admin.Dial(adminSocket(home))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Plugins {
		if p.Name == "memory" {
			if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	stdout.waitFor(t, "generation 2 published\n")
	if code, out, errOut := runBinary(t, "restart", "audit", "--home", home, "--config", demoConfig); code != exitOK {
		t.Fatalf("restart audit: exit %d\n%s%s", code, out, errOut)
	}
	stdout.waitFor(t, "generation 3 published\n")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Errorf("kernelctl run: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(waitLimit):
		t.Fatal("kernelctl run did not exit after SIGTERM")
	}
	out := stdout.String()
	if !strings.Contains(out, "1 warning:\n  package \"audit\" optionally requires metrics.sink") {
		t.Errorf("the summary does not show the warning:\n%s", out)
	}
	if n := strings.Count(out, "warning: "); n != 0 {
		t.Errorf("the generation's warning was printed again %d times after the summary:\n%s", n, out)
	}
	if n := strings.Count(out, "crashed memory: "); n != 1 {
		t.Errorf("the crash was printed %d times, want once:\n%s", n, out)
	}
}
