package admin

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/internal/benchkit"
	"github.com/extkernel/extkernel/kernel"
)

// BenchmarkStatus64 measures the status handler with 64 running plugins,
// the socket excluded: each iteration routes GET /v1/status and builds,
// encodes and writes the answer (every plugin's state, pid, uptime and
// call counters) to an in-memory recorder. It reports the median and 99th
// percentile of one answer (p50-ns, p99-ns); the target is p99 under 1 ms.
// The plugins are copies of testdata/bench/sdkplugin; the host declares
// no point or slot, so their contributions are warnings and all 64 run.
func BenchmarkStatus64(b *testing.B) {
	bin := b.TempDir()
	if err := benchkit.Build(filepath.Join("..", ".."), bin, "./testdata/bench/sdkplugin"); err != nil {
		b.Fatal(err)
	}
	home := b.TempDir()
	if _, err := benchkit.Install(home, filepath.Join("..", "testdata", "bench", "sdkplugin", "plugin.json"),
		filepath.Join(bin, "sdkplugin"), nil, benchkit.Names("p", 64)...); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	k, err := kernel.New(kernel.Config{Home: home, Logger: hclog.NewNullLogger()})
	if err != nil {
		b.Fatal(err)
	}
	if err := k.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { k.Close(ctx) })
	if n := len(k.Plugins()); n != 64 {
		b.Fatalf("%d plugins, want 64", n)
	}
	s := NewServer(k, Options{})
	b.Cleanup(func() { s.Close(ctx) })
	req := httptest.NewRequest("GET", "/v1/status", nil)
	lat := benchkit.NewLatencies(b.N)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		rec := httptest.NewRecorder()
		s.serveHTTP(rec, req)
		lat.Add(time.Since(start))
		if rec.Code != 200 {
			b.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
		}
	}
	lat.Report(b)
}
