//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// BenchmarkCrashDetection measures how long a pending call takes to fail
// with a *CrashError once its plugin is SIGKILLed. Per iteration, with the
// timer stopped, it starts the good test plugin and begins a call to its
// "block" provider, which never answers; once the plugin reports the
// handler running, the timer runs from the SIGKILL to the call's return.
// ns/op is the mean; p50-ns and p99-ns are the median and 99th percentile
// of the same durations. BENCHMARKS.md (## crash detection) has the figures.
func BenchmarkCrashDetection(b *testing.B) {
	pkg := benchGoodPackage(b)
	blocking := make(chan struct{}, 1)
	opts := Options{Host: protocol.HostInfo{Name: "bench", Version: "0.0.0"}, OnNotify: func(_ *Client, event string, data json.RawMessage) {
		n := wire.NotifyParams{Event: event, Data: data}
		if n.Event == "blocking" {
			blocking <- struct{}{}
		}
	}}
	ctx := context.Background()
	durations := make([]time.Duration, 0, b.N)
	b.StopTimer()
	for range b.N {
		c, err := Start(ctx, pkg, opts)
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "block"})
			done <- err
		}()
		<-blocking
		b.StartTimer()
		start := time.Now()
		if err := syscall.Kill(c.PID(), syscall.SIGKILL); err != nil {
			b.Fatal(err)
		}
		err = <-done
		d := time.Since(start)
		b.StopTimer()
		durations = append(durations, d)
		var ce *CrashError
		if !errors.As(err, &ce) || ce.ExitStatus != "signal: killed" {
			b.Fatalf("call err = %v, want a *CrashError of a killed process", err)
		}
		if err := c.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(durations)
	b.ReportMetric(float64(quantile(durations, 0.50).Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(quantile(durations, 0.99).Nanoseconds()), "p99-ns")
}

// quantile returns the q-quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// benchGoodPackage installs the good test plugin in a fresh home.
func benchGoodPackage(b *testing.B) *pluginpkg.Package {
	b.Helper()
	manifest, err := os.ReadFile(filepath.Join("..", "testdata", "plugins", "good", pluginpkg.ManifestFile))
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), pluginpkg.PackagesDir, "good")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, pluginpkg.ManifestFile)
	if err := os.WriteFile(path, manifest, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Link(filepath.Join(binDir, "good"), filepath.Join(dir, "good")); err != nil {
		b.Fatal(err)
	}
	m, err := pluginpkg.ParseFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return &pluginpkg.Package{Name: "good", Dir: dir, ManifestPath: path, Manifest: m, Enabled: true}
}
