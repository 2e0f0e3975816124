package kernel_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/config"
)

// recorder is a slog.Handler keeping every record with its attributes,
// the ones given to WithAttrs included.
type recorder struct {
	mu    *sync.Mutex
	recs  *[]map[string]any
	attrs []slog.Attr
}

func (r recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r recorder) Handle(_ context.Context, rec slog.Record) error {
	m := map[string]any{"msg": rec.Message, "level": rec.Level}
	for _, a := range r.attrs {
		m[a.Key] = a.Value.Any()
	}
	rec.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.Any(); return true })
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.recs = append(*r.recs, m)
	return nil
}

func (r recorder) WithAttrs(as []slog.Attr) slog.Handler {
	r.attrs = append(slices.Clip(r.attrs), as...)
	return r
}

func (r recorder) WithGroup(string) slog.Handler { return r }

// TestSlogLoggerGetsKernelLines: a host logging with log/slog
// (config.SlogLogger, issue 26 item 9) receives the kernel's debug lines
// (item 3): each plugin's spawn with its pid, its handshake with the
// elapsed time, under the plugin's name, and the members of the
// published generation under "kernel".
func TestSlogLoggerGetsKernelLines(t *testing.T) {
	var recs []map[string]any
	rec := recorder{mu: new(sync.Mutex), recs: &recs}
	cfg := demoConfig()
	cfg.Logger = config.SlogLogger(slog.New(rec))
	k, err := kernel.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	has := func(msg, logger string, keys ...string) bool {
		return slices.ContainsFunc(recs, func(m map[string]any) bool {
			if m["msg"] != msg || m["logger"] != logger || m["level"] != slog.LevelDebug {
				return false
			}
			for _, k := range keys {
				if _, ok := m[k]; !ok {
					return false
				}
			}
			return true
		})
	}
	for _, want := range []struct {
		msg, logger string
		keys        []string
	}{
		{"spawn", "redactor", []string{"argv", "pid"}},
		{"handshake", "redactor", []string{"pid", "elapsed"}},
		{"member", "kernel", []string{"generation", "plugin", "status"}},
		{"stop", "memory", []string{"pid"}},
	} {
		if !has(want.msg, want.logger, want.keys...) {
			t.Errorf("no debug record %q from logger %q with %v among %d records", want.msg, want.logger, want.keys, len(recs))
		}
	}
}
