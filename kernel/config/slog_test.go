package config_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/kernel/config"
)

// jsonLines decodes one JSON object per line, dropping the time.
func jsonLines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		delete(m, "time")
		delete(m, "@timestamp")
		out = append(out, m)
	}
	return out
}

func TestSlogLogger(t *testing.T) {
	var buf bytes.Buffer
	sl := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: config.LevelTrace}))
	l := config.SlogLogger(sl).Named("kernel").With("generation", 3)
	l.Trace("frame", "dir", "send")
	l.Named("sidecar").Debug("spawn", "argv", []string{"bin/p"}, "pid", 42)
	l.Info("odd", "dangling")
	l.Warn("slow", 7, "ms")
	l.Error("failed", "err", "boom")

	got := jsonLines(t, &buf)
	want := []string{
		`{"dir":"send","generation":3,"level":"DEBUG-4","logger":"kernel","msg":"frame"}`,
		`{"argv":["bin/p"],"generation":3,"level":"DEBUG","logger":"kernel.sidecar","msg":"spawn","pid":42}`,
		`{"EXTRA_VALUE_AT_END":"dangling","generation":3,"level":"INFO","logger":"kernel","msg":"odd"}`,
		`{"7":"ms","generation":3,"level":"WARN","logger":"kernel","msg":"slow"}`,
		`{"err":"boom","generation":3,"level":"ERROR","logger":"kernel","msg":"failed"}`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i := range want {
		b, _ := json.Marshal(got[i])
		if string(b) != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, b, want[i])
		}
	}
	if args := l.ImpliedArgs(); len(args) != 2 || args[0] != "generation" {
		t.Errorf("ImpliedArgs = %v, want [generation 3]", args)
	}
	if l.Name() != "kernel" {
		t.Errorf("Name = %q, want kernel", l.Name())
	}
}

func TestSlogLoggerLevels(t *testing.T) {
	var buf bytes.Buffer
	l := config.SlogLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if l.IsDebug() || !l.IsInfo() || l.GetLevel() != hclog.Info {
		t.Errorf("handler at info: IsDebug %v IsInfo %v GetLevel %v", l.IsDebug(), l.IsInfo(), l.GetLevel())
	}
	l.Debug("hidden")
	l.SetLevel(hclog.Error)
	l.Warn("hidden too")
	if buf.Len() != 0 {
		t.Errorf("lines below the level were logged: %s", buf.String())
	}
	l.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Error}).Print("from log")
	if !strings.Contains(buf.String(), "level=ERROR msg=\"from log\"") {
		t.Errorf("StandardLogger line = %q", buf.String())
	}
}

func TestSlogHandler(t *testing.T) {
	var buf bytes.Buffer
	hl := hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, Level: hclog.Trace, Name: "host"})
	sl := slog.New(config.SlogHandler(hl)).With(config.LoggerKey, "kernel", "generation", 3)
	sl.Log(context.Background(), config.LevelTrace, "frame")
	sl.WithGroup("req").Debug("call", "id", 7, slog.Group("peer", "name", "p1"))
	sl.Info("up")
	sl.Warn("slow")
	sl.Error("failed", "err", "boom")

	got := jsonLines(t, &buf)
	want := []string{
		`{"@level":"trace","@message":"frame","@module":"host.kernel","generation":3}`,
		`{"@level":"debug","@message":"call","@module":"host.kernel","generation":3,"req.id":7,"req.peer.name":"p1"}`,
		`{"@level":"info","@message":"up","@module":"host.kernel","generation":3}`,
		`{"@level":"warn","@message":"slow","@module":"host.kernel","generation":3}`,
		`{"@level":"error","@message":"failed","@module":"host.kernel","err":"boom","generation":3}`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i := range want {
		b, _ := json.Marshal(got[i])
		if string(b) != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, b, want[i])
		}
	}

	hl.SetLevel(hclog.Warn)
	if h := config.SlogHandler(hl); h.Enabled(context.Background(), slog.LevelInfo) || !h.Enabled(context.Background(), slog.LevelWarn) {
		t.Errorf("Enabled does not follow the hclog level")
	}
}

// A host that logs with log/slog gives the kernel its logger through
// SlogLogger; the kernel's Named loggers show as the "logger" attribute.
func ExampleSlogLogger() {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	host := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: noTime}))
	cfg := config.Config{Home: "home", Logger: config.SlogLogger(host)}
	cfg.Logger.Named("kernel").Debug("spawn", "plugin", "hello", "pid", 4242)
	// Output:
	// level=DEBUG msg=spawn logger=kernel plugin=hello pid=4242
}

// SlogHandler goes the other way: code that takes a *slog.Logger logs
// through the host's hclog.Logger.
func ExampleSlogHandler() {
	hl := hclog.New(&hclog.LoggerOptions{Output: os.Stdout, Level: hclog.Debug, DisableTime: true, Name: "host"})
	sl := slog.New(config.SlogHandler(hl))
	sl.With("plugin", "hello").Info("ready", "pid", 4242)
	// Output:
	// [INFO]  host: ready: plugin=hello pid=4242
}
