//go:build unix

package sidecar

import (
	"context"
	"errors"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/extkernel/extkernel/internal/process"
	"github.com/extkernel/extkernel/internal/procstat"
)

// closeClient closes c within the test bound and checks the process group
// is gone.
func closeClient(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	assertNoProcesses(t, c.PID())
}

// assertNoProcesses fails unless no process is a child of the test process
// (but the host's reaper, which lives as long as the host) and none is in
// one of the process groups pgids. /proc is scanned, so zombies count.
func assertNoProcesses(t *testing.T, pgids ...int) {
	t.Helper()
	self, reaper := os.Getpid(), process.ReaperPID()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Logf("no /proc (%v): processes left behind are not looked for", err)
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := procstat.Read(pid)
		if err != nil {
			continue
		}
		if st.PPID == self && pid != reaper {
			t.Errorf("process %d (state %s) is still a child of the test", pid, st.State)
		}
		for _, g := range pgids {
			if g != 0 && st.PGRP == g {
				t.Errorf("process %d (state %s) is still in plugin process group %d", pid, st.State, g)
			}
		}
	}
}

// processGone reports whether pid no longer exists (not even as a zombie).
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// needLinux skips the test under the portable fallbacks (any system but
// Linux, or Linux built with -tags extkernel_portable), which lack what.
func needLinux(t *testing.T, what string) {
	t.Helper()
	if process.Portable {
		t.Skipf("portable fallbacks: no %s", what)
	}
}
