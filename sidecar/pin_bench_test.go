//go:build unix

package sidecar

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/extkernel/extkernel/internal/benchkit"
	"github.com/extkernel/extkernel/internal/plugintest"
	"github.com/extkernel/extkernel/pluginpkg"
)

// BenchmarkColdStartPinned measures what a pin costs the start of one
// plugin, paired in one loop (benchkit.ColdStartPaired): the same package
// unpinned, with a package pin (its files copied and digested into a
// private directory, the command hashed through its descriptor: issue 23
// item 5) and, for the SDK binary, with an executable pin. sdk is the
// benchmark's SDK plugin (one Go binary, ./sdkplugin); script is the
// bash-script test package (plugin.sh run by bash from PATH). Each
// starter has a package of its own. Run it with a fixed count, e.g.
// -benchtime 200x.
func BenchmarkColdStartPinned(b *testing.B) {
	_, sdk := benchBinaries(b)
	b.Run("sdk", func(b *testing.B) {
		benchkit.ColdStartPaired(b, []benchkit.Starter{
			{Name: "unpinned", Start: pinnedStarter(b, benchPackages(b, sdk, 1)[0], "")},
			{Name: "package-pin", Start: pinnedStarter(b, benchPackages(b, sdk, 1)[0], "package")},
			{Name: "executable-pin", Start: pinnedStarter(b, benchPackages(b, sdk, 1)[0], "executable")},
		})
	})
	b.Run("script", func(b *testing.B) {
		if _, err := exec.LookPath("bash"); err != nil {
			b.Skip("no bash:", err)
		}
		benchkit.ColdStartPaired(b, []benchkit.Starter{
			{Name: "unpinned", Start: pinnedStarter(b, benchScript(b), "")},
			{Name: "package-pin", Start: pinnedStarter(b, benchScript(b), "package")},
		})
	})
}

// benchScript installs the bash-script test package in a fresh home.
func benchScript(b *testing.B) *pluginpkg.Package {
	b.Helper()
	fixture := filepath.Join("..", "testdata", "plugins", "bash-script")
	manifest, err := os.ReadFile(filepath.Join(fixture, pluginpkg.ManifestFile))
	if err != nil {
		b.Fatal(err)
	}
	pkg := plugintest.Install(b, b.TempDir(), "bash-script", string(manifest), binDir)
	script, err := os.ReadFile(filepath.Join(fixture, "plugin.sh"))
	if err == nil {
		err = os.WriteFile(filepath.Join(pkg.Dir, "plugin.sh"), script, 0o644)
	}
	if err != nil {
		b.Fatal(err)
	}
	return pkg
}

// pinnedStarter pins pkg ("package", "executable" or "" for no pin) and
// returns a start of it.
func pinnedStarter(b *testing.B, pkg *pluginpkg.Package, pin string) func(context.Context) (func() error, error) {
	b.Helper()
	var err error
	switch pin {
	case "package":
		pkg.Pin, err = pkg.PackagePin()
	case "executable":
		var path string
		if path, err = pkg.CommandPath(); err == nil {
			pkg.Pin, err = pluginpkg.ExecutableSHA256(path)
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	return func(ctx context.Context) (func() error, error) {
		c, err := Start(ctx, pkg, benchOptions())
		if err != nil {
			return nil, err
		}
		return func() error { return c.Close(ctx) }, nil
	}
}
