//go:build unix

package main

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/extkernel/extkernel/admin"
)

// scriptWait bounds every wait of the script commands below.
const scriptWait = 60 * time.Second

// TestScripts runs the CLI scripts of testdata/script/*.txtar: each starts
// with a copy of the demo home (its plugins built) in $WORK/home and the
// demo config in $WORK/kernel.json, and runs kernelctl (this test binary,
// see TestMain) as a user would, a `kernelctl run` in the background
// included. They are unix-only: they stop `run` with SIGINT.
func TestScripts(t *testing.T) {
	buildDemo(t)
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		Setup:               setupScript,
		Deadline:            deadlineOf(t),
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"waitadmin": cmdWaitAdmin,
			"waitevent": cmdWaitEvent,
			"waitlog":   cmdWaitLog,
			"mkstale":   cmdMkStale,
		},
	})
}

// deadlineOf is the test's deadline, or none.
func deadlineOf(t *testing.T) time.Time {
	d, _ := t.Deadline()
	return d
}

// setupScript copies the demo home's packages and state file, and the demo
// config, into the script's work directory.
func setupScript(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, "home")
	if err := os.CopyFS(filepath.Join(home, "packages"), os.DirFS(filepath.Join(demoHome, "packages"))); err != nil {
		return err
	}
	for from, to := range map[string]string{filepath.Join(demoHome, "state.json"): filepath.Join(home, "state.json"),
		demoConfig: filepath.Join(env.WorkDir, "kernel.json")} {
		data, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			return err
		}
	}
	// A race-enabled kernelctl would sleep 1s at each exit.
	env.Setenv("GORACE", "atexit_sleep_ms=0")
	return nil
}

// cmdWaitAdmin waits until a kernel answers on HOME's admin socket:
// `waitadmin HOME`. It tries again on every change in HOME/run, so that it
// never polls.
func cmdWaitAdmin(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitadmin HOME")
	}
	dir := filepath.Join(ts.MkAbs(args[0]), "run")
	ts.Check(os.MkdirAll(dir, 0o700))
	w, err := fsnotify.NewWatcher()
	ts.Check(err)
	defer w.Close()
	ts.Check(w.Add(dir))
	sock := filepath.Join(dir, adminSocketName)
	deadline := time.NewTimer(scriptWait)
	defer deadline.Stop()
	for {
		if c, err := admin.Dial(sock); err == nil {
			c.Close()
			return
		}
		select {
		case <-w.Events:
		case err := <-w.Errors:
			ts.Fatalf("watching %s: %v", dir, err)
		case <-deadline.C:
			ts.Fatalf("no kernel answered on %s within %v", sock, scriptWait)
		}
	}
}

// errFound ends a wait's stream.
var errFound = errors.New("found")

// follow connects to HOME's admin socket and runs fn with a context
// bounded by scriptWait.
func follow(ts *testscript.TestScript, home string, fn func(context.Context, *admin.Client) error) {
	c, err := admin.Dial(adminSocket(ts.MkAbs(home)))
	ts.Check(err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), scriptWait)
	defer cancel()
	if err := fn(ctx, c); !errors.Is(err, errFound) {
		ts.Fatalf("not seen within %v: %v", scriptWait, err)
	}
}

// cmdWaitEvent waits for an event of the kernel on HOME, kept or new:
// `waitevent HOME TYPE [GENERATION]` (generation at least GENERATION).
func cmdWaitEvent(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: waitevent HOME TYPE [GENERATION]")
	}
	var gen uint64
	if len(args) == 3 {
		n, err := strconv.ParseUint(args[2], 10, 64)
		ts.Check(err)
		gen = n
	}
	follow(ts, args[0], func(ctx context.Context, c *admin.Client) error {
		return c.Events(ctx, admin.EventsRequest{Follow: true}, func(e admin.EventLine) error {
			if e.Type == args[1] && e.Generation >= gen {
				return errFound
			}
			return nil
		})
	})
}

// cmdWaitLog waits for a log line of a plugin containing a text: `waitlog
// HOME PLUGIN TEXT`.
func cmdWaitLog(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: waitlog HOME PLUGIN TEXT")
	}
	follow(ts, args[0], func(ctx context.Context, c *admin.Client) error {
		return c.Logs(ctx, admin.LogsRequest{Plugin: args[1], Follow: true}, func(l admin.LogLine) error {
			if strings.Contains(l.Message, args[2]) {
				return errFound
			}
			return nil
		})
	})
}

// cmdMkStale leaves a Unix socket nobody answers at PATH, as a killed
// kernel does: `mkstale PATH`.
func cmdMkStale(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkstale PATH")
	}
	path := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o700))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	ts.Check(err)
	ln.SetUnlinkOnClose(false)
	ts.Check(ln.Close())
}
