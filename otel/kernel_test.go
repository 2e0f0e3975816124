package kernelotel

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/go-hclog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/protocol"
)

// callerPackage writes the package name into home, running bin (the
// caller test plugin of the main module's testdata/plugins/caller) with
// the given provides and requires entries.
func callerPackage(t *testing.T, home, bin, name string, provides, requires []map[string]any, env map[string]string) {
	t.Helper()
	dir := filepath.Join(home, "packages", name)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "plugin"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest, err := json.Marshal(map[string]any{
		"format": 1, "name": name, "version": "1.0.0",
		"runtime":  map[string]any{"command": "./bin/plugin", "env": env, "intercepts": []string{}, "replaces": []string{}},
		"provides": provides, "requires": requires,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTraceThroughPlugins runs a real kernel with two plugins and follows
// one host request through them: the host's span, the dispatch, the call
// to memory, memory's call to kvstore (relayed by the kernel), kvstore's
// call to the host's host.log handler, and the handler's own span. Each
// is the child of the one before, in one trace, across two plugin
// processes that carry only the traceparent.
func TestTraceThroughPlugins(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "caller")
	build := exec.Command("go", "build", "-o", bin, "github.com/extkernel/extkernel/testdata/plugins/caller")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the caller plugin: %v\n%s", err, out)
	}
	home := t.TempDir()
	callerPackage(t, home, bin, "memory", []map[string]any{},
		[]map[string]any{{"capability": "storage.kv", "version": "^1.0"}}, map[string]string{})
	callerPackage(t, home, bin, "kvstore",
		[]map[string]any{{"capability": "storage.kv", "version": "1.2.0", "methods": map[string]string{"get": "run"}}},
		[]map[string]any{{"capability": "host.log", "version": "^1.0"}}, map[string]string{"CALLER_PROVIDES": "storage.kv@1.2.0"})

	o, rec, _ := newTestObserver(t)
	tracer := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("host")
	handled := make(chan string, 1)
	cfg := config.Config{
		Home: home, Host: protocol.HostInfo{Name: "otel-test", Version: "1.0.0"}, Logger: hclog.NewNullLogger(), Observer: o,
		Capabilities: []capability.Provided{{Key: "host.log", Version: semver.MustParse("1.0.0")}},
		Handlers: map[capability.Key]capability.Handler{"host.log": func(ctx context.Context, c *capability.Call) (json.RawMessage, error) {
			_, span := tracer.Start(ctx, "handler")
			span.End()
			handled <- c.Caller
			return json.RawMessage(`"logged"`), nil
		}},
	}
	k, err := kernel.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := k.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	}()

	// memory calls storage.kv.get, served by kvstore's "run", whose
	// script calls host.log.write; each names the request it serves.
	script := `{"call":{"capability":"storage.kv","method":"get","parent":true,
		"input":{"call":{"capability":"host.log","method":"write","parent":true}}}}`
	hostCtx, hostSpan := tracer.Start(ctx, "host request")
	out, err := k.CallProvider(hostCtx, "plugin/memory/run", json.RawMessage(script))
	hostSpan.End()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"output":{"output":"logged"}}`; string(out) != want {
		t.Fatalf("answer %s, want %s", out, want)
	}
	if caller := <-handled; caller != "kvstore" {
		t.Errorf("host.log called by %q, want kvstore", caller)
	}

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = s
	}
	chain := []struct {
		name string
		kind trace.SpanKind
	}{
		{"host request", trace.SpanKindInternal},
		{"dispatch provider", trace.SpanKindInternal},
		{"provider memory", trace.SpanKindClient},
		{"provider kvstore", trace.SpanKindClient},
		{"host.log/write", trace.SpanKindServer},
		{"handler", trace.SpanKindInternal},
	}
	if len(byName) != len(chain) {
		t.Errorf("spans %v, want the %d of the chain", keys(byName), len(chain))
	}
	traceID := hostSpan.SpanContext().TraceID()
	for i, c := range chain {
		s, ok := byName[c.name]
		if !ok {
			t.Errorf("no span %q (spans: %v)", c.name, keys(byName))
			continue
		}
		if s.SpanContext().TraceID() != traceID || s.SpanKind() != c.kind {
			t.Errorf("span %q: trace %v kind %v, want trace %v kind %v", c.name, s.SpanContext().TraceID(), s.SpanKind(), traceID, c.kind)
		}
		if i == 0 {
			continue
		}
		if up, ok := byName[chain[i-1].name]; ok && s.Parent().SpanID() != up.SpanContext().SpanID() {
			t.Errorf("span %q: parent %v, want %q (%v)", c.name, s.Parent().SpanID(), chain[i-1].name, up.SpanContext().SpanID())
		}
	}
}

func keys(m map[string]sdktrace.ReadOnlySpan) []string { return slices.Sorted(maps.Keys(m)) }
