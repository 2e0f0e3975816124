//go:build linux

package confine

import (
	"os"
	"testing"

	"github.com/extkernel/extkernel/pluginpkg"
)

// BenchmarkPlan measures planning one plugin's confinement: the merge,
// the interpreter chain, the system paths and what the machine enforces.
func BenchmarkPlan(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	spec := Spec{Mode: pluginpkg.ConfineRequire, Vars: Vars{Package: b.TempDir(), Data: b.TempDir(), Tmp: b.TempDir()},
		Command: self, PATH: os.Getenv("PATH")}
	for b.Loop() {
		if _, _, err := Plan(spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStart measures Start around a start that does nothing: a
// thread locked, restricted and discarded.
func BenchmarkStart(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	p, _, err := Plan(Spec{Mode: pluginpkg.ConfineRequire, Vars: Vars{Package: b.TempDir(), Data: b.TempDir(), Tmp: b.TempDir()},
		Command: self, PATH: os.Getenv("PATH")})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := Start(p, func() error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
