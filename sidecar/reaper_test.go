//go:build unix

package sidecar

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/process"
	"github.com/extkernel/extkernel/internal/procstat"
	"github.com/extkernel/extkernel/pluginpkg"
)

func init() { runTestHost = testHost }

// testHost starts the package in dir with data under dataRoot, prints
// "<plugin pid> <helper pid> <reaper pid>" and runs until stdin ends (or
// it is killed). It returns the exit code.
func testHost(dir string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "test host:", err)
		return 2
	}
	m, err := pluginpkg.ParseFile(filepath.Join(dir, pluginpkg.ManifestFile))
	if err != nil {
		return fail(err)
	}
	pkg := &pluginpkg.Package{Name: m.Name, Dir: dir, ManifestPath: pluginpkg.ManifestFile, Manifest: m, Enabled: true}
	dataRoot := filepath.Join(dir, "data")
	c, err := Start(context.Background(), pkg, Options{DataRoot: dataRoot, HeartbeatInterval: -1})
	if err != nil {
		return fail(err)
	}
	helper, err := os.ReadFile(filepath.Join(dataRoot, pkg.Name, "helper.pid"))
	if err != nil {
		return fail(err)
	}
	fmt.Printf("%d %s %d\n", c.PID(), strings.TrimSpace(string(helper)), process.ReaperPID())
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = c.Close(context.Background())
	return 0
}

// TestHostDeath starts a host process running a bash plugin that has a
// child of its own (sleep 600 &) in its process group, ends the host, and
// checks that nothing of the plugin's group is left 2 s later, and that
// the host's reaper, which killed the group, is gone too. Terminal signals
// sent to the reaper first do not end it.
func TestHostDeath(t *testing.T) {
	needLinux(t, "reaper")
	tests := []struct {
		name string
		end  func(t *testing.T, host *exec.Cmd, stdin io.Closer, reaper int)
	}{
		{"SIGKILL", func(t *testing.T, host *exec.Cmd, _ io.Closer, _ int) {
			if err := host.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}},
		{"Ctrl-C on the reaper, then SIGKILL", func(t *testing.T, host *exec.Cmd, _ io.Closer, reaper int) {
			for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
				if err := syscall.Kill(reaper, sig); err != nil {
					t.Fatal(err)
				}
			}
			if err := host.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}},
		{"host exits", func(t *testing.T, _ *exec.Cmd, stdin io.Closer, _ int) {
			stdin.Close() // the host closes its client and exits
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, stdin, pgid, helper, reaper := startTestHost(t)
			defer killGroup(pgid) // should the test fail
			if reaper == 0 {
				t.Error("the host started no reaper")
			}
			tt.end(t, host, stdin, reaper)
			_ = host.Wait()
			waitGone(t, pgid, helper, reaper)
		})
	}
}

// startTestHost starts the test binary as a host (runTestHost) of the
// shell plugin in mode child, and returns it with its stdin, the plugin's
// process group, its child's pid and the host's reaper's pid.
func startTestHost(t *testing.T) (host *exec.Cmd, stdin io.WriteCloser, pgid, helper, reaper int) {
	t.Helper()
	pkg := installShell(t, t.TempDir(), "shell", "child")
	host = exec.Command(os.Args[0])
	host.Env = append(os.Environ(), testHostEnv+"="+pkg.Dir)
	host.Stderr = os.Stderr
	stdin, err := host.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	stdout, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if _, serr := fmt.Sscan(line, &pgid, &helper, &reaper); err != nil || serr != nil {
		_ = host.Process.Kill()
		_ = host.Wait()
		t.Fatalf("test host printed %q: %v, %v", line, err, serr)
	}
	if st, _ := procstat.Read(helper); st.PGRP != pgid {
		t.Errorf("the plugin's child %d is in process group %d, want %d", helper, st.PGRP, pgid)
	}
	return host, stdin, pgid, helper, reaper
}

// waitGone fails unless, within 2 s, process group pgid and the reaper are
// gone. Orphans of the host are re-parented to this test process (a child
// subreaper), which reaps them as they die.
func waitGone(t *testing.T, pgid, helper, reaper int) {
	t.Helper()
	gone := func() bool {
		reapGroupOf(pgid)
		if reaper != 0 {
			var ws syscall.WaitStatus
			_, _ = syscall.Wait4(reaper, &ws, syscall.WNOHANG, nil)
		}
		return groupGone(pgid) && (reaper == 0 || processGone(reaper))
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(2 * time.Second)
	defer deadline.Stop()
	for !gone() {
		select {
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("2 s after the host ended: process group %d exists (helper %d gone: %v), reaper %d gone: %v",
				pgid, helper, processGone(helper), reaper, reaper == 0 || processGone(reaper))
		}
	}
}

// killGroup SIGKILLs process group pgid and reaps what of it is the test
// process's, waiting (at most 2 s) until nothing of it is left, so that a
// failed test leaves no zombie for the leak checks of the tests after it.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	deadline := time.Now().Add(2 * time.Second)
	for {
		reapGroupOf(pgid)
		if groupGone(pgid) || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// reapGroupOf reaps the children of the test process in process group
// pgid that have exited.
func reapGroupOf(pgid int) {
	for {
		var ws syscall.WaitStatus
		if pid, err := syscall.Wait4(-pgid, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
			return
		}
	}
}

// groupGone reports whether no process (zombies included) is in process
// group pgid.
func groupGone(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := procstat.Read(pid); err == nil && st.PGRP == pgid {
			return false
		}
	}
	return true
}
