package sdk

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// sink keeps what an allocation test makes on the heap.
var sink *Plugin

// TestNewCreatesNoLogger: New allocates the plugin and its registry and
// nothing else (it allocated twice as much when it created the logger);
// the default logger is created on first use.
func TestNewCreatesNoLogger(t *testing.T) {
	bare := testing.AllocsPerRun(100, func() {
		p := &Plugin{name: "lazy", version: "1.0.0"}
		p.mu.reg = newRegistry()
		sink = p
	})
	got := testing.AllocsPerRun(100, func() { sink = New("lazy", "1.0.0") })
	if got > bare {
		t.Errorf("New makes %v allocations, want %v (the plugin and its registry): it creates more than it needs to start", got, bare)
	}
}

// TestDefaultLoggerIsLazy: a plugin that answers the handshake and reaches
// the end of its input logs only debug lines, which its default logger
// (info level) drops, so that logger is never created. The first line at
// info level or above creates it, and it writes what the eager one wrote:
// hclog JSON lines on stderr, named after the plugin, at info level.
func TestDefaultLoggerIsLazy(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	t.Cleanup(func() { os.Stderr = stderr; r.Close(); w.Close() })

	p := New("lazy", "1.0.0")
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.3.0","host":{"name":"h","version":"1"},"plugin":{"name":"lazy","version":"1.0.0"}}}` + "\n"
	var out bytes.Buffer
	if err := p.ServeIO(context.Background(), strings.NewReader(initialize), &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"name":"lazy"`) {
		t.Fatalf("initialize answered %q", out.String())
	}
	if p.def.created.Load() {
		t.Fatal("the default logger was created by a session that logged only debug lines")
	}

	out.Reset()
	if err := p.ServeIO(context.Background(), strings.NewReader("not json\n"), &out); err != nil {
		t.Fatal(err)
	}
	if !p.def.created.Load() {
		t.Fatal("a warning did not create the default logger")
	}
	if p.Logger() != p.Logger() {
		t.Error("Logger returned two default loggers")
	}
	line, err := bufio.NewReader(r).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(line, &rec); err != nil {
		t.Fatalf("stderr line %q is not JSON: %v", line, err)
	}
	if rec["@level"] != "warn" || rec["@module"] != "lazy" || rec["@message"] != "malformed frame from host" {
		t.Errorf("stderr line %s, want hclog JSON at warn from module lazy", line)
	}
	if ctx := context.Background(); !p.Logger().Enabled(ctx, slog.LevelInfo) || p.Logger().Enabled(ctx, slog.LevelDebug) {
		t.Error("default logger is not at info level")
	}
}

// TestHclogLines: the default handler writes the lines hclog writes, as
// the host parses them: each level's name, the plugin as @module, the
// line's fields, a timestamp.
func TestHclogLines(t *testing.T) {
	var b strings.Builder
	l := slog.New(hclogJSON(&b, "fmt", slog.LevelDebug-4))
	l.Log(context.Background(), slog.LevelDebug-4, "t")
	l.Debug("d")
	l.Info("i", "n", 3)
	l.Warn("w")
	l.Error("e", "err", "boom")
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if _, err := time.Parse(time.RFC3339, rec["@timestamp"].(string)); err != nil || rec["@module"] != "fmt" {
			t.Errorf("line %s: bad @timestamp or @module", line)
		}
		got = append(got, fmt.Sprintf("%v %v %v %v", rec["@level"], rec["@message"], rec["n"], rec["err"]))
	}
	want := []string{"trace t <nil> <nil>", "debug d <nil> <nil>", "info i 3 <nil>", "warn w <nil> <nil>", "error e <nil> boom"}
	if !slices.Equal(got, want) {
		t.Errorf("lines:\n%q\nwant\n%q", got, want)
	}
}
