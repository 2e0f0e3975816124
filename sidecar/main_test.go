package sidecar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"

	"github.com/extkernel/extkernel/pluginpkg"
)

// binDir holds the test plugins built once by TestMain: good (on the SDK)
// and faulty (raw protocol, one fault per mode).
var binDir string

var binaries = []string{"good", "faulty"}

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER for prctl(2).
const prSetChildSubreaper = 36

func TestMain(m *testing.M) {
	if dir := os.Getenv(testHostEnv); dir != "" {
		os.Exit(runTestHost(dir))
	}
	dir, err := os.MkdirTemp("", "sidecar-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binDir = dir
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"../testdata/plugins/good", "../testdata/plugins/faulty")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build test plugins: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	// Orphaned grandchildren of plugins become our children, so the tests
	// can check that Close kills and reaps them rather than leaving them to
	// init.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		fmt.Fprintln(os.Stderr, "prctl(PR_SET_CHILD_SUBREAPER):", errno)
		os.Exit(2)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// within bounds every wait of a test: generous, since it only turns a hang
// into a failure; no test asserts on elapsed time.
const within = 15 * time.Second

// installFixture copies testdata/plugins/<name>/plugin.json into a fresh
// home, links the test binaries next to it and returns the parsed package.
func installFixture(t *testing.T, name string) *pluginpkg.Package {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "plugins", name, pluginpkg.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	return addPackage(t, t.TempDir(), name, string(data))
}

// addPackage installs a package named name with manifest text under home
// and returns it, parsed and enabled.
func addPackage(t *testing.T, home, name, manifest string) *pluginpkg.Package {
	t.Helper()
	dir := filepath.Join(home, pluginpkg.PackagesDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, pluginpkg.ManifestFile)
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, b := range binaries {
		if err := os.Link(filepath.Join(binDir, b), filepath.Join(dir, b)); err != nil {
			t.Fatal(err)
		}
	}
	m, err := pluginpkg.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return &pluginpkg.Package{
		Name:         name,
		Dir:          dir,
		ManifestPath: filepath.ToSlash(filepath.Join(pluginpkg.PackagesDir, name, pluginpkg.ManifestFile)),
		Manifest:     m,
		Enabled:      true,
	}
}

// goodManifest returns a manifest for the SDK plugin under another name.
func goodManifest(name string, required bool) string {
	return fmt.Sprintf(`{"format": 1, "name": %q, "version": "1.0.0",
  "runtime": {"command": "./good", "required": %t, "intercepts": ["tool.before"], "replaces": ["context.compactor"]},
  "provides": [{"capability": "test.echo", "version": "1.0.0"}]}`, name, required)
}

// faultyManifest returns a manifest running the raw plugin in mode.
func faultyManifest(name, mode string, required bool) string {
	return fmt.Sprintf(`{"format": 1, "name": %q, "version": "0.1.0",
  "runtime": {"command": "./faulty", "args": [%q], "required": %t}}`, name, mode, required)
}

// logBuffer is a concurrency-safe sink for a test's hclog output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testOptions returns client options with a JSON logger into the returned
// buffer, a data root, heartbeats off and short stop budgets.
func testOptions(t *testing.T) (Options, *logBuffer) {
	logs := new(logBuffer)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("host log:\n%s", tailString(logs.String(), 8000))
		}
	})
	return Options{
		Logger:            hclog.New(&hclog.LoggerOptions{Name: "host", Output: logs, JSONFormat: true, Level: hclog.Trace}),
		HostName:          "sidecar-test",
		HostVersion:       "0.0.1",
		DataRoot:          t.TempDir(),
		ShutdownGrace:     3 * time.Second,
		KillGrace:         time.Second,
		HeartbeatInterval: -1,
	}, logs
}

func tailString(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

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
	self, reaper := os.Getpid(), reaperPID()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
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

// recv waits for a value on ch within the test bound.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("no %s within %v", what, within)
		panic("unreachable")
	}
}
