//go:build unix

package sidecar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/extkernel/extkernel/internal/process"
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
		ppid, pgrp, state, ok := procStat(pid)
		if !ok {
			continue
		}
		if ppid == self && pid != reaper {
			t.Errorf("process %d (state %s) is still a child of the test", pid, state)
		}
		for _, g := range pgids {
			if g != 0 && pgrp == g {
				t.Errorf("process %d (state %s) is still in plugin process group %d", pid, state, g)
			}
		}
	}
}

// procStat reads the parent, process group and state of pid.
func procStat(pid int) (ppid, pgrp int, state string, ok bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, "", false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return 0, 0, "", false
	}
	ppid, _ = strconv.Atoi(f[1])
	pgrp, _ = strconv.Atoi(f[2])
	return ppid, pgrp, f[0], true
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
