//go:build unix

package sidecar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/extkernel/extkernel/internal/procstat"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
)

// installShell installs the bash plugin testdata/plugins/shell as package
// name under home, running in mode, and returns it.
func installShell(t *testing.T, home, name, mode string) *pluginpkg.Package {
	t.Helper()
	manifest := fmt.Sprintf(`{"format": 1, "name": %q, "version": "0.1.0",
  "runtime": {"command": "./plugin.sh", "args": [%q]}}`, name, mode)
	pkg := addPackage(t, home, name, manifest)
	script, err := os.ReadFile(filepath.Join("..", "testdata", "plugins", "shell", "plugin.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg.Dir, "plugin.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	return pkg
}

// helperPID returns the pid the shell plugin recorded for its helper, and
// checks the helper runs in the session mode says.
func helperPID(t *testing.T, dataDir string, pluginPID int, detached bool) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dataDir, "helper.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	st, err := procstat.Read(pid)
	if err != nil {
		t.Fatalf("helper %d is not running: %v", pid, err)
	}
	if detached != (st.PGRP != pluginPID) {
		t.Fatalf("helper %d is in process group %d, plugin %d: want detached %v", pid, st.PGRP, pluginPID, detached)
	}
	return pid
}

// TestDetachedHelper starts bash plugins that leave a helper holding their
// stdout and stderr in a session of its own (setsid), and checks that the
// plugin's exit is the crash all the same, that Close is bounded, and that
// the helper is killed: nothing is left and no goroutine hangs.
func TestDetachedHelper(t *testing.T) {
	needLinux(t, "search for the holders of a plugin's pipes")
	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	tests := []struct {
		name     string
		mode     string
		crash    bool            // the plugin exits on a call, which the test makes
		closeCtx context.Context // Close's context
		closeErr error           // what Close's error wraps, or nil
	}{
		{name: "plugin exits", mode: "detach-exit", crash: true, closeCtx: context.Background()},
		{name: "Close", mode: "detach", closeCtx: context.Background()},
		{name: "Close with a done context", mode: "detach", closeCtx: done, closeErr: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, logs := testOptions(t)
			crashes := make(chan *CrashError, 2)
			opts.OnCrash = func(_ *Client, e *CrashError) { crashes <- e }
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			pkg := installShell(t, t.TempDir(), "shell", tt.mode)
			c, err := Start(ctx, pkg, opts)
			if err != nil {
				t.Fatal(err)
			}
			helper := helperPID(t, filepath.Join(opts.DataRoot, pkg.Name), c.PID(), true)
			defer syscall.Kill(helper, syscall.SIGKILL) // should the test fail
			if tt.crash {
				crashOnCall(t, c, crashes)
			}
			closeWithin(t, c, tt.closeCtx, tt.closeErr)
			if !processGone(helper) {
				t.Errorf("helper %d exists after Close", helper)
			}
			assertNoProcesses(t, c.PID(), helper)
			if !strings.Contains(logs.String(), "killed processes that held the plugin's pipes") {
				t.Error("the helper's killing is not logged")
			}
			if !tt.crash && len(crashes) != 0 {
				t.Errorf("a stopped plugin reported a crash: %v", <-crashes)
			}
		})
	}
}

// crashOnCall makes the detach-exit plugin exit with a call and checks
// the crash is reported at once: to the call, to OnCrash and to later
// calls.
func crashOnCall(t *testing.T, c *Client, crashes <-chan *CrashError) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	_, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "x"})
	var ce *CrashError
	if !errors.As(err, &ce) || ce.ExitStatus != "exit status 2" || ce.Cause != nil ||
		!slices.Contains(ce.Stderr, "exiting; the helper keeps my stdout and stderr") {
		t.Fatalf("call err = %#v, want the crash with exit status 2 and the last stderr line", err)
	}
	if got := recv(t, crashes, "OnCrash"); got != ce {
		t.Errorf("OnCrash got %v, want the call's error", got)
	}
	if err := ping(c, ctx); err != error(ce) {
		t.Errorf("Ping after the crash = %v, want the crash", err)
	}
}

// closeWithin closes c with ctx, failing unless Close returns within the
// test bound with nil (or an error wrapping want) and every goroutine of
// the client has ended.
func closeWithin(t *testing.T, c *Client, ctx context.Context, want error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Close(ctx) }()
	err := recv(t, done, "return from Close")
	if (want == nil && err != nil) || (want != nil && !errors.Is(err, want)) {
		t.Errorf("Close = %v, want %v", err, want)
	}
	select {
	case <-c.quiet:
	default:
		t.Error("Close returned before every goroutine of the client ended")
	}
}
