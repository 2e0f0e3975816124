//go:build unix

package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/extkernel/extkernel/admin"
)

// notifyListener listens on a unixgram socket as systemd does for a
// Type=notify service, and hands each datagram to the test.
func notifyListener(t *testing.T) (path string, msgs <-chan string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "sdn") // short: a socket path has ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path = filepath.Join(dir, "notify.sock")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, _, err := conn.ReadFromUnix(buf)
			if err != nil {
				return
			}
			ch <- string(buf[:n])
		}
	}()
	t.Cleanup(func() { conn.Close(); <-done })
	return path, ch
}

// nextNotify returns the next datagram, failing after waitLimit.
func nextNotify(t *testing.T, msgs <-chan string) string {
	t.Helper()
	select {
	case m := <-msgs:
		return m
	case <-time.After(waitLimit):
		t.Fatal("no sd_notify datagram within the wait limit")
		return ""
	}
}

// TestSDNotify runs the real kernelctl with NOTIFY_SOCKET set: it sends
// READY=1 once the generation serves, RELOADING=1 with MONOTONIC_USEC and
// READY=1 again around a reload on SIGHUP, and STOPPING=1 when `kernelctl
// stop` stops it; status names its pid, and stop waits until it has
// stopped.
func TestSDNotify(t *testing.T) {
	buildDemo(t)
	sock, msgs := notifyListener(t)
	t.Setenv(notifySocketEnv, sock)
	home := filepath.Join(t.TempDir(), "home")
	copyDir(t, demoHome, home)
	os.RemoveAll(filepath.Join(home, "state")) // generation 1
	cmd, _, stderr, exited := startKernelctl(t, "run", "--home", home, "--config", demoConfig)

	if got, want := nextNotify(t, msgs), "READY=1\nSTATUS=generation 1 serving"; got != want {
		t.Fatalf("first datagram %q, want %q", got, want)
	}
	before, _ := monotonicUsec()
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^RELOADING=1\nMONOTONIC_USEC=([0-9]+)\nSTATUS=reloading$`).FindStringSubmatch(nextNotify(t, msgs))
	if m == nil {
		t.Fatal("after SIGHUP: no RELOADING=1 with MONOTONIC_USEC")
	}
	after, _ := monotonicUsec()
	if usec, _ := strconv.ParseUint(m[1], 10, 64); usec < before || usec > after {
		t.Errorf("MONOTONIC_USEC=%d is not between %d and %d (CLOCK_MONOTONIC around the reload)", usec, before, after)
	}
	if got, want := nextNotify(t, msgs), "READY=1\nSTATUS=generation 1 serving"; got != want {
		t.Errorf("after the reload %q, want %q", got, want)
	}

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
	if st.Kernel.PID != cmd.Process.Pid || !strings.HasPrefix(st.Kernel.Version, "kernelctl ") || st.Kernel.Config != absPath(demoConfig) {
		t.Errorf("status kernel = %+v, want pid %d, version kernelctl ..., config %s", st.Kernel, cmd.Process.Pid, absPath(demoConfig))
	}

	stop := exec.Command(os.Args[0], "stop", "--home", home, "--config", demoConfig)
	stop.Env = append(os.Environ(), helperEnv+"=1", "GORACE=atexit_sleep_ms=0")
	out, err := stop.CombinedOutput()
	if err != nil {
		t.Fatalf("kernelctl stop: %v\n%s", err, out)
	}
	if want := "stopped the kernel on home " + home + " (pid " + strconv.Itoa(cmd.Process.Pid) + ")\n"; string(out) != want {
		t.Errorf("kernelctl stop printed %q, want %q", out, want)
	}
	if got, want := nextNotify(t, msgs), "STOPPING=1\nSTATUS=stopping"; got != want {
		t.Errorf("at the stop %q, want %q", got, want)
	}
	// stop returned once the run lock was free: the kernel has stopped.
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Errorf("kernelctl run: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(waitLimit):
		t.Fatal("kernelctl run did not exit after kernelctl stop")
	}
}
