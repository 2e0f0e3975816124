package admin

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/benchkit"
	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/config"
)

// BenchmarkStatus64 measures the status handler with 64 running plugins,
// the socket excluded: each iteration routes GET /v1/status and builds,
// encodes and writes the answer (every plugin's state, pid, uptime and
// call counters) to an in-memory recorder. It reports the median and 99th
// percentile of one answer (p50-ns, p99-ns); the target is p99 under 1 ms.
// The plugins are copies of testdata/plugins/scripted, each an
// interceptor at tool.before, which the host declares: a generation with
// no warning, as a healthy one is.
func BenchmarkStatus64(b *testing.B) {
	bin := b.TempDir()
	if err := benchkit.Build("..", bin, "./testdata/plugins/scripted"); err != nil {
		b.Fatal(err)
	}
	manifest := filepath.Join(b.TempDir(), "plugin.json")
	if err := os.WriteFile(manifest, []byte(`{"format": 1, "name": "x", "version": "1.0.0", "runtime": {"command": "./scripted",
		"env": {"SCRIPT_INTERCEPT": "tool.before=continue"}, "intercepts": ["tool.before"]}}`), 0o644); err != nil {
		b.Fatal(err)
	}
	home := b.TempDir()
	if _, err := benchkit.Install(home, manifest, filepath.Join(bin, "scripted"), nil, benchkit.Names("p", 64)...); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	k, err := kernel.New(config.Config{Home: home, Points: []contribution.Point{"tool.before"}, Logger: hclog.NewNullLogger()})
	if err != nil {
		b.Fatal(err)
	}
	if err := k.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { k.Close(ctx) })
	if n, w := len(k.Plugins()), k.Current().Warnings(); n != 64 || len(w) != 0 {
		b.Fatalf("%d plugins, want 64; warnings %q", n, w)
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
