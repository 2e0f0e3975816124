// Package plugintest installs test plugin packages for the tests of the
// packages that start plugins (sidecar, internal/builder): a package
// directory with a manifest and hard links to test binaries built once per
// test binary from testdata/plugins.
package plugintest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/extkernel/extkernel/pluginpkg"
)

// Build compiles the test plugins testdata/plugins/<name> of the module
// whose root is root into dir, one binary per name.
func Build(root, dir string, names ...string) error {
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, n := range names {
		args = append(args, "./"+filepath.ToSlash(filepath.Join("testdata", "plugins", n)))
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build test plugins: %v\n%s", err, out)
	}
	return nil
}

// Install writes a package named name with the manifest text under home,
// hard-links each of binaries from binDir next to it, and returns it parsed
// and enabled, as pluginpkg would load it.
func Install(t testing.TB, home, name, manifest, binDir string, binaries ...string) *pluginpkg.Package {
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

// GoodManifest returns a manifest running the SDK test plugin "good" under
// another name.
func GoodManifest(name string, required bool) string {
	return fmt.Sprintf(`{"format": 1, "name": %q, "version": "1.0.0",
  "runtime": {"command": "./good", "required": %t, "intercepts": ["tool.before"], "replaces": ["context.compactor"]},
  "provides": [{"capability": "test.echo", "version": "1.0.0"}]}`, name, required)
}

// FaultyManifest returns a manifest running the raw test plugin "faulty"
// in mode.
func FaultyManifest(name, mode string, required bool) string {
	return fmt.Sprintf(`{"format": 1, "name": %q, "version": "0.1.0",
  "runtime": {"command": "./faulty", "args": [%q], "required": %t}}`, name, mode, required)
}
