//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests of this file stop plugins and kernelctl with Unix signals.

// runDemoInProcess runs `kernelctl run` on the demo config in this process
// until cancel is called, and returns once it is running. code receives the
// exit code; a test that reads it must send it back for the cleanup.
func runDemoInProcess(t *testing.T) (stdout *outBuffer, stderr *bytes.Buffer, cancel func(), code chan int) {
	t.Helper()
	buildDemo(t)
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr = newOutBuffer(), &bytes.Buffer{}
	code = make(chan int, 1)
	go func() { code <- runContext(ctx, []string{"run", "--config", demoConfig}, stdout, stderr) }()
	t.Cleanup(func() { cancel(); <-code })
	stdout.waitFor(t, "running; reload with SIGHUP")
	return stdout, stderr, cancel, code
}

// TestRunUntilCancelled runs without --once in-process: a plugin killed
// while run waits is reported with the restart it gets, and cancelling
// (what SIGINT does) stops every plugin.
func TestRunUntilCancelled(t *testing.T) {
	stdout, stderr, cancel, code := runDemoInProcess(t)
	kids := children(t)
	if len(kids) != 4 {
		t.Fatalf("plugin processes = %v, want 4 (audit, kvstore, memory, redactor)", kids)
	}
	memory := pidOf(t, kids, "memory")
	if err := syscall.Kill(memory, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	stdout.waitFor(t, `crashed memory: plugin "memory" exited unexpectedly (signal: killed)`+"\n")
	// The supervisor reports its decision to restart in an event of its
	// own, after the crash's: cancelling before it may print it after
	// "stopping" (the restart itself is cancelled either way).
	stdout.waitFor(t, "restarting memory: crash 1 of 3 allowed")

	cancel()
	select {
	case c := <-code:
		code <- c // for the cleanup
		if c != exitOK {
			t.Errorf("exit code = %d, want 0; stderr:\n%s", c, stderr.String())
		}
	case <-time.After(waitLimit):
		t.Fatal("run did not return after cancel")
	}
	if !strings.HasSuffix(stdout.String(), "stopping\nstopped\n") {
		t.Errorf("stdout does not end with stopping, stopped:\n%s", stdout.String())
	}
	noChildren(t)
}

// TestRunSignal runs kernelctl in a subprocess (this test binary, see
// TestMain) and stops it with a real signal: it exits 0 and every plugin
// it started is gone.
func TestRunSignal(t *testing.T) {
	buildDemo(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, stdout, stderr, exited := startKernelctl(t, "run", "--config", demoConfig)
			plugins := childrenOf(t, cmd.Process.Pid)
			if len(plugins) != 4 {
				t.Fatalf("plugin processes = %v, want 4", plugins)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				exited <- err // for the cleanup
				if err != nil {
					t.Errorf("kernelctl: %v; stderr:\n%s", err, stderr.String())
				}
			case <-time.After(waitLimit):
				t.Fatalf("kernelctl did not exit after %v", sig)
			}
			if !strings.HasSuffix(stdout.String(), "stopping\nstopped\n") {
				t.Errorf("stdout does not end with stopping, stopped:\n%s", stdout.String())
			}
			for _, pid := range plugins {
				if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
					t.Errorf("plugin process %d outlived kernelctl", pid)
				}
			}
		})
	}
}

// TestRunReloadOnSIGHUP changes the home under a running kernelctl and
// sends SIGHUP: the applied plan is printed and the new generation's
// snapshot recorded; a reload that cannot succeed is rolled back with its
// problems and the running generation keeps serving.
func TestRunReloadOnSIGHUP(t *testing.T) {
	buildDemo(t)
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	copyDir(t, demoHome, home)
	os.RemoveAll(filepath.Join(home, "state"))
	cmd, stdout, stderr, exited := startKernelctl(t, "run", "--home", home, "--config", demoConfig)

	writeManifest(t, home, "audit", func(m map[string]any) { m["version"] = "1.0.1" })
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	stdout.waitFor(t, "reload applied; generation 2 serving\n")
	wantLines(t, "reload output", stdout.String(),
		"  ~ audit     reloaded   1.0.0 -> 1.0.1  version 1.0.0 -> 1.0.1",
		"    kvstore   unchanged  1.4.0")
	if _, err := os.Stat(filepath.Join(home, "state", "snapshots", "2.json")); err != nil {
		t.Errorf("snapshot of generation 2: %v", err)
	}

	writeManifest(t, home, "kvstore", func(m map[string]any) {
		runtimeOf(m)["command"] = "./bin/missing"
		runtimeOf(m)["required"] = true
	})
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	stdout.waitFor(t, "reload rolled back; generation 2 keeps serving:")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("kernelctl: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(waitLimit):
		t.Fatal("kernelctl did not exit after SIGTERM")
	}
	if !strings.Contains(stdout.String(), `required plugin "kvstore" failed`) {
		t.Errorf("the rollback does not name the failed plugin:\n%s", stdout.String())
	}
}

// TestRunRefusesSecondKernel runs a kernel on the demo home and checks that
// a second `run` on the same home is refused with the holder's pid (here,
// this process), starts nothing, and leaves the first one serving.
func TestRunRefusesSecondKernel(t *testing.T) {
	_, stderr, cancel, code := runDemoInProcess(t)
	before := children(t)

	var out2, err2 bytes.Buffer
	c := runContext(context.Background(), []string{"run", "--config", demoConfig, "--once"}, &out2, &err2)
	home, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "demo", "home"))
	want := "home " + home + " is in use by another kernel (pid " + strconv.Itoa(os.Getpid()) + ")"
	if c != exitFailed || !strings.Contains(err2.String(), want) {
		t.Errorf("second run: exit %d, stderr %q; want exit 1 naming %q", c, err2.String(), want)
	}
	if out2.Len() != 0 {
		t.Errorf("second run printed %q, want nothing on stdout", out2.String())
	}
	if after := children(t); len(after) != len(before) {
		t.Errorf("plugin processes %v after the refused run, want %v", after, before)
	}
	cancel()
	if c := <-code; c != exitOK {
		t.Errorf("first run: exit %d; stderr:\n%s", c, stderr.String())
	}
	code <- exitOK
	noChildren(t)
}

// TestRunRecoversStaleLock kills a running kernelctl with SIGKILL, so that
// it leaves its run lock file behind, and checks that the next run takes
// the lock over, says so on stderr, and runs.
func TestRunRecoversStaleLock(t *testing.T) {
	buildDemo(t)
	cmd, _, _, exited := startKernelctl(t, "run", "--config", demoConfig)
	pid := cmd.Process.Pid
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
	case <-time.After(waitLimit):
		t.Fatal("kernelctl did not exit after SIGKILL")
	}
	var stdout, stderr bytes.Buffer
	c := runContext(context.Background(), []string{"run", "--config", demoConfig, "--once"}, &stdout, &stderr)
	want := "left by pid " + strconv.Itoa(pid) + " which is gone"
	if c != exitOK || !strings.Contains(stderr.String(), want) {
		t.Errorf("run after SIGKILL: exit %d, stderr %q; want exit 0 and a note containing %q", c, stderr.String(), want)
	}
	noChildren(t)
}
