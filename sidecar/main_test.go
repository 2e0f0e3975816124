package sidecar

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"

	"github.com/extkernel/extkernel/internal/plugintest"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// testHostEnv, set to a package directory, makes the test binary a host
// (runTestHost) instead of running tests.
const testHostEnv = "SIDECAR_TEST_HOST"

// runTestHost, set where the test host is built (reaper_test.go, Unix),
// runs the test binary as a host of the package in dir and returns its
// exit code.
var runTestHost func(dir string) int

// binDir holds the test plugins built once by TestMain: good (on the SDK),
// faulty (raw protocol, one fault per mode), caller (raw protocol 1.1,
// calls the host) and streamer (on the SDK, streams).
var binDir string

var binaries = []string{"good", "faulty", "caller", "streamer"}

func TestMain(m *testing.M) {
	if dir := os.Getenv(testHostEnv); dir != "" && runTestHost != nil {
		os.Exit(runTestHost(dir))
	}
	dir, err := os.MkdirTemp("", "sidecar-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binDir = dir
	if err := plugintest.Build("..", dir, binaries...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	if err := becomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, err)
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

// addPackage installs a package named name with manifest text under home,
// with the test binaries next to it, and returns it, parsed and enabled.
func addPackage(t *testing.T, home, name, manifest string) *pluginpkg.Package {
	return plugintest.Install(t, home, name, manifest, binDir, binaries...)
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
		Host:              protocol.HostInfo{Name: "sidecar-test", Version: "0.0.1"},
		DataRoot:          t.TempDir(),
		shutdownGrace:     3 * time.Second,
		killGrace:         time.Second,
		HeartbeatInterval: -1,
	}, logs
}

func tailString(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
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
