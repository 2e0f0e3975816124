//go:build linux && !extkernel_portable

package sidecar

import (
	"context"
	"fmt"
	"testing"

	"github.com/extkernel/extkernel/internal/benchkit"
	"github.com/extkernel/extkernel/pluginpkg"
)

// BenchmarkColdStartConfined measures what confinement costs a cold start,
// paired in one loop with the unconfined start it is compared with
// (benchkit.ColdStartPaired): n SDK plugins started under the pool, plain
// and confined under "require" to the minimal set (planned, then forked
// from a thread confined with Landlock, seccomp and no_new_privs). Each
// starter has packages of its own. Run it with a fixed count, e.g. -benchtime 100x.
func BenchmarkColdStartConfined(b *testing.B) {
	_, sdk := benchBinaries(b)
	for _, n := range []int{1, 16} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			confined := benchOptions()
			confined.DataRoot = b.TempDir()
			confined.Confinement = pluginpkg.Confinement{Mode: pluginpkg.ConfineRequire}
			plain := benchOptions()
			plain.DataRoot = b.TempDir()
			benchkit.ColdStartPaired(b, []benchkit.Starter{
				{Name: "unconfined", Start: startWith(b, sdk, n, plain)},
				{Name: "confined", Start: startWith(b, sdk, n, confined)},
			})
		})
	}
}

// startWith returns a start of n packages running bin with opts, at most
// benchPool at a time.
func startWith(b *testing.B, bin string, n int, opts Options) func(context.Context) (func() error, error) {
	pkgs := benchPackages(b, bin, n)
	byName := make(map[string]*pluginpkg.Package, n)
	names := make([]string, n)
	for i, p := range pkgs {
		byName[p.Name], names[i] = p, p.Name
	}
	return func(ctx context.Context) (func() error, error) {
		clients, err := benchkit.StartPool(ctx, names, benchPool, func(name string) (*Client, error) {
			return Start(ctx, byName[name], opts)
		})
		return func() error { return benchkit.CloseClients(ctx, clients) }, err
	}
}
