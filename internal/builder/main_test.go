//go:build unix

package builder

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/extkernel/extkernel/internal/plugintest"
	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// binDir holds the test plugins built once by TestMain: good (on the SDK)
// and faulty (raw protocol, one fault per mode).
var binDir string

var binaries = []string{"good", "faulty"}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "builder-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binDir = dir
	if err := plugintest.Build(filepath.Join("..", ".."), dir, binaries...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
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

// addPackage installs a package named name with manifest text under home,
// with the test binaries next to it.
func addPackage(t *testing.T, home, name, manifest string) *pluginpkg.Package {
	return plugintest.Install(t, home, name, manifest, binDir, binaries...)
}

// testOptions are client options for the tests: heartbeats off.
func testOptions() sidecar.Options {
	return sidecar.Options{Host: protocol.HostInfo{Name: "builder-test", Version: "0.0.1"}, HeartbeatInterval: -1}
}

// assertNoProcesses checks that the test process has no child left but
// the host's reaper.
func assertNoProcesses(t *testing.T) {
	t.Helper()
	pids, ok := proctest.Children(os.Getpid())
	if ok && len(pids) > 0 {
		t.Errorf("processes %v are still children of the test", pids)
	}
}
