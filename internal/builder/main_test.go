//go:build unix

package builder

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

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
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"../../testdata/plugins/good", "../../testdata/plugins/faulty")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build test plugins: %v\n%s", err, out)
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
// with the test binaries next to it, and returns it, parsed and enabled.
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
	return &pluginpkg.Package{Name: name, Dir: dir, Manifest: m, Enabled: true,
		ManifestPath: filepath.ToSlash(filepath.Join(pluginpkg.PackagesDir, name, pluginpkg.ManifestFile))}
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
