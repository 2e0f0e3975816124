//go:build linux && !extkernel_portable

package sidecar

import (
	"context"
	"fmt"
	"testing"
	"time"

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

// BenchmarkRoundTripConfined measures what confinement costs a call: an
// SDK plugin confined under "require" to the minimal set and the same
// plugin unconfined, called in turn in one loop (one echo each per
// iteration, the order alternating), so that the machine's load lands on
// both. It reports each one's median and 99th percentile and the ratio of
// the medians (confined/unconfined p50).
func BenchmarkRoundTripConfined(b *testing.B) {
	_, sdk := benchBinaries(b)
	confined := benchOptions()
	confined.DataRoot = b.TempDir()
	confined.Confinement = pluginpkg.Confinement{Mode: pluginpkg.ConfineRequire}
	echoes := []benchEcho{clientEcho(startBenchPackage(b, benchPackages(b, sdk, 1)[0], benchOptions())),
		clientEcho(startBenchPackage(b, benchPackages(b, sdk, 1)[0], confined))}
	lat := []*benchkit.Latencies{benchkit.NewLatencies(b.N), benchkit.NewLatencies(b.N)}
	for range 100 {
		for _, e := range echoes {
			if err := e.call(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for i := range b.N {
		for j := range echoes {
			k := (i + j) % 2
			start := time.Now()
			if err := echoes[k].call(); err != nil {
				b.Fatal(err)
			}
			lat[k].Add(time.Since(start))
		}
	}
	b.StopTimer()
	p50 := make([]float64, 2)
	for k, name := range []string{"unconfined", "confined"} {
		q50, q99 := lat[k].Quantiles()
		p50[k] = float64(q50)
		b.ReportMetric(p50[k], name+"-p50-ns")
		b.ReportMetric(float64(q99), name+"-p99-ns")
	}
	b.ReportMetric(p50[1]/p50[0], "confined/unconfined-p50")
}
