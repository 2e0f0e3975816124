//go:build unix

package builder

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/pkgfiles"
	"github.com/extkernel/extkernel/pluginpkg"
)

// BenchmarkBuildLazy64 times Build of a generation of 64 lazy members
// whose manifests declare their contributions, from inputs already loaded:
// resolution, the declared contributions, the registry, the fingerprints
// (a walk and a stat of each package's files, their digests cached) and
// the assembly. No process starts (checked).
func BenchmarkBuildLazy64(b *testing.B) {
	home := b.TempDir()
	for i := range 64 {
		name := fmt.Sprintf("p-%02d", i)
		addPackage(&testing.T{}, home, name, fmt.Sprintf(`{"format": 1, "name": %q, "version": "1.0.0",
  "runtime": {"command": "./good", "activation": "lazy", "contributes": {"provider": ["echo"]}}}`, name))
	}
	time.Sleep(2 * pkgfiles.RacyWindow) // installed a moment ago: past the digest cache's racy window
	inst, err := pluginpkg.LoadInstalled(home)
	if err != nil || len(inst.Packages) != 64 {
		b.Fatalf("load: %v, %d packages", err, len(inst.Packages))
	}
	launch := map[string]generation.Launch{}
	for _, p := range inst.Packages {
		launch[p.Name] = generation.Launch{Activation: pluginpkg.ActivationLazy}
	}
	in := generation.Inputs{Number: 1, Installed: inst, Launch: launch}
	ctx := context.Background()
	build := func() *Running {
		r, err := Build(ctx, in, Options{Client: testOptions()})
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	build().Close(ctx) // digests every file once, as a host's first build does
	b.ResetTimer()
	for range b.N {
		r := build()
		b.StopTimer()
		for _, m := range r.Generation().Members() {
			if m.Status != generation.StatusDeclared {
				b.Fatalf("%s: %s", m.Package.Name, m.Status)
			}
		}
		if err := r.Close(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
