package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// blocker is a provider that blocks until released or cancelled, reporting
// that it started and how it ended.
type blocker struct {
	started chan struct{}
	release chan struct{}
	ended   chan error // nil when released, ctx.Err() when cancelled
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}, 8), release: make(chan struct{}), ended: make(chan error, 8)}
}

func (b *blocker) handler(ctx context.Context, _ json.RawMessage) (any, error) {
	b.started <- struct{}{}
	select {
	case <-b.release:
		b.ended <- nil
		return "released", nil
	case <-ctx.Done():
		b.ended <- ctx.Err()
		return nil, ctx.Err()
	}
}

func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

func invoke(ref string) wire.ProviderInvokeParams { return wire.ProviderInvokeParams{Ref: ref} }

func TestCallsAreMultiplexed(t *testing.T) {
	p := New("tester", "1.0.0")
	unblock := make(chan struct{})
	p.Provider("first", "", func(ctx context.Context, _ json.RawMessage) (any, error) {
		select {
		case <-unblock:
			return "first", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	p.Provider("second", "", func(context.Context, json.RawMessage) (any, error) {
		close(unblock)
		return "second", nil
	})
	h := serve(t, p)
	h.initialize(1)
	h.call(2, wire.MethodProviderInvoke, invoke("first"))
	h.call(3, wire.MethodProviderInvoke, invoke("second"))
	// "first" can only finish because "second" ran while it was blocked;
	// once unblocked, the two answers race, so compare them by id.
	got := map[string]string{}
	for range 2 {
		m := h.recv()
		got[string(m.ID)] = string(m.Result)
	}
	want := map[string]string{"2": `{"output":"first"}`, "3": `{"output":"second"}`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("answers %v, want %v", got, want)
	}
}

// serveBlocked serves a plugin with a blocking "block" provider, completes
// the handshake and leaves request 2 running in that provider.
func serveBlocked(t *testing.T) (*blocker, *harness) {
	t.Helper()
	b := newBlocker()
	p := New("tester", "1.0.0")
	p.Provider("block", "", b.handler)
	h := serve(t, p)
	h.initialize(1)
	h.call(2, wire.MethodProviderInvoke, invoke("block"))
	wait(t, b.started, "handler start")
	return b, h
}

func TestPingIsNotQueued(t *testing.T) {
	b, h := serveBlocked(t)
	h.call(3, wire.MethodPing, nil)
	h.result(3, `{}`)
	close(b.release)
	h.result(2, `{"output":"released"}`)
}

func TestCancel(t *testing.T) {
	b, h := serveBlocked(t)
	h.cancelCall(2)
	h.error(2, protocol.CodeRequestCancelled, "provider/invoke cancelled by the host")
	if err := wait(t, b.ended, "handler end"); !errors.Is(err, context.Canceled) {
		t.Errorf("handler ended with %v, want context.Canceled", err)
	}
	h.cancelCall(2)  // already answered: ignored
	h.cancelCall(99) // never sent: ignored
	h.call(3, wire.MethodPing, nil)
	h.result(3, `{}`)
}

func TestDuplicateRequestID(t *testing.T) {
	b, h := serveBlocked(t)
	h.call(2, wire.MethodProviderInvoke, invoke("block"))
	h.error(2, wire.CodeInvalidRequest, "request id 2 is already in flight")
	close(b.release)
	h.result(2, `{"output":"released"}`)
}

func TestShutdownWaitsForHandlers(t *testing.T) {
	b, h := serveBlocked(t)
	h.call(3, wire.MethodShutdown, nil)
	h.result(3, `{}`)
	if h.returned() {
		t.Fatal("ServeIO returned while a handler was in flight")
	}
	close(b.release)
	h.result(2, `{"output":"released"}`)
	if err := h.wait(); err != nil {
		t.Fatalf("ServeIO = %v, want nil", err)
	}
}

func TestEndOfInputEndsServe(t *testing.T) {
	h := serve(t, New("tester", "1.0.0"))
	h.initialize(1)
	h.inW.Close()
	if err := h.wait(); err != nil {
		t.Fatalf("ServeIO = %v, want nil", err)
	}
}

func TestEndOfInputCancelsStragglers(t *testing.T) {
	withBounds(t, bounds{drain: time.Millisecond, cancel: waitLimit, inline: inlineBound})
	b, h := serveBlocked(t)
	h.inW.Close()
	h.error(2, protocol.CodeRequestCancelled, "provider/invoke cancelled: the plugin is shutting down")
	if err := h.wait(); err != nil {
		t.Fatalf("ServeIO = %v, want nil", err)
	}
	if err := wait(t, b.ended, "handler end"); !errors.Is(err, context.Canceled) {
		t.Errorf("handler ended with %v, want context.Canceled", err)
	}
}

func TestContextCancelEndsServe(t *testing.T) {
	b, h := serveBlocked(t)
	h.cancel()
	if err := h.wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("ServeIO = %v, want context.Canceled", err)
	}
	if err := wait(t, b.ended, "handler end"); !errors.Is(err, context.Canceled) {
		t.Errorf("handler ended with %v, want context.Canceled", err)
	}
}

func TestStuckHandler(t *testing.T) {
	release, ended := make(chan struct{}), make(chan struct{})
	p := New("tester", "1.0.0")
	withBounds(t, bounds{drain: time.Millisecond, cancel: time.Millisecond, inline: inlineBound})
	started := make(chan struct{})
	p.Provider("stuck", "", func(context.Context, json.RawMessage) (any, error) {
		defer close(ended)
		close(started)
		<-release // ignores its context
		return nil, nil
	})
	h := serve(t, p)
	h.initialize(1)
	h.call(2, wire.MethodProviderInvoke, invoke("stuck"))
	wait(t, started, "handler start")
	h.call(3, wire.MethodShutdown, nil)
	h.result(3, `{}`)
	if err := h.wait(); !errors.Is(err, ErrHandlersStuck) || !strings.HasPrefix(err.Error(), "sdk: 1 handlers did not return") {
		t.Fatalf("ServeIO = %v, want 1 ErrHandlersStuck", err)
	}
	close(release)
	wait(t, ended, "stuck handler end")
}

func TestNotify(t *testing.T) {
	p := New("tester", "1.0.0")
	if err := p.Notify("early", nil); !errors.Is(err, ErrNotServing) {
		t.Fatalf("Notify before serving = %v, want ErrNotServing", err)
	}
	hookErr := make(chan error, 1)
	p.OnInitialize(func(context.Context, protocol.InitializeParams) error {
		hookErr <- p.Notify("during", nil)
		return nil
	})
	h := serve(t, p)
	h.initialize(1)
	if err := <-hookErr; !errors.Is(err, ErrHandshakeIncomplete) {
		t.Fatalf("Notify in OnInitialize = %v, want ErrHandshakeIncomplete", err)
	}
	if err := p.Notify("index.ready", map[string]int{"files": 3}); err != nil {
		t.Fatal(err)
	}
	if m := h.recv(); !m.IsNotification() || frame(m) != `{"jsonrpc":"2.0","method":"notify","params":{"event":"index.ready","data":{"files":3}}}` {
		t.Fatalf("got %s", frame(m))
	}
	if err := p.Notify("bad", func() {}); err == nil || !strings.Contains(err.Error(), `notify "bad": marshal data`) {
		t.Fatalf("Notify(func) = %v", err)
	}
	if err := p.ServeIO(context.Background(), strings.NewReader(""), io.Discard); !errors.Is(err, ErrAlreadyServing) {
		t.Fatalf("second ServeIO = %v, want ErrAlreadyServing", err)
	}
}

func TestMalformedFrames(t *testing.T) {
	tests := []struct {
		name, line string
		code       int
	}{
		{"banner", "hello host", wire.CodeParseError},
		{"broken json", `{"jsonrpc":`, wire.CodeParseError},
		{"json array", `[1,2]`, wire.CodeInvalidRequest},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, wire.CodeInvalidRequest},
		{"no method no id", `{"jsonrpc":"2.0"}`, wire.CodeInvalidRequest},
	}
	h := serve(t, New("tester", "1.0.0"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.t = t
			if _, err := io.WriteString(h.inW, tt.line+"\n"); err != nil {
				t.Fatal(err)
			}
			m := h.recv()
			if string(m.ID) != "null" || m.Error == nil || m.Error.Code != tt.code {
				t.Fatalf("got %s, want an error %d with id null", frame(m), tt.code)
			}
		})
	}
	h.t = t
	h.initialize(1)
}

func TestFrameTooLargeEndsServe(t *testing.T) {
	h := serve(t, New("tester", "1.0.0"))
	go func() { // the rest of the line is never read; cleanup unblocks it
		_, _ = io.WriteString(h.inW, `{"jsonrpc":"2.0","method":"x","params":"`+strings.Repeat("a", wire.DefaultMaxFrame)+"\"}\n")
	}()
	if err := h.wait(); !errors.Is(err, wire.ErrFrameTooLarge) {
		t.Fatalf("ServeIO = %v, want ErrFrameTooLarge", err)
	}
}

func TestWriteFailureEndsServe(t *testing.T) {
	h := serve(t, New("tester", "1.0.0"))
	h.outR.Close()
	h.call(1, wire.MethodPing, nil)
	if err := h.wait(); !errors.Is(err, io.ErrClosedPipe) || !strings.HasPrefix(err.Error(), "write to host: ") {
		t.Fatalf("ServeIO = %v, want a write error", err)
	}
}

// goroutineID returns the calling goroutine's id, from its stack header.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// TestWorkersAreReused checks that sequential calls run on reused worker
// goroutines rather than one new goroutine each.
func TestWorkersAreReused(t *testing.T) {
	p := New("tester", "1.0.0")
	p.Provider("gid", "", func(context.Context, json.RawMessage) (any, error) { return goroutineID(), nil })
	h := serve(t, p)
	h.initialize(1)
	const calls = 50
	ids := map[string]bool{}
	for i := range calls {
		h.call(2+i, wire.MethodProviderInvoke, invoke("gid"))
		m := h.response(2 + i)
		var res wire.OutputResult
		if err := json.Unmarshal(m.Result, &res); err != nil {
			t.Fatal(err)
		}
		ids[string(res.Output)] = true
	}
	// The worker idles before the host has the answer and sends the next
	// request, so nearly every call reuses it; allow for a slow scheduler.
	if len(ids) > calls/2 {
		t.Errorf("%d calls ran on %d goroutines, want reuse", calls, len(ids))
	}
}

// TestSlowHandlerHandsOverAtOnce checks the adaptive hand-off: after a
// handler outlives the inline bound, the next request hands the read role
// over before its handler runs (so it runs on a different goroutine from
// the request after it), and once a handler is quick again, requests run
// on the reading goroutine.
func TestSlowHandlerHandsOverAtOnce(t *testing.T) {
	const bound = 50 * time.Millisecond
	p := New("tester", "1.0.0")
	withBounds(t, bounds{drain: drainWait, cancel: cancelWait, inline: bound})
	p.Provider("slow", "", func(context.Context, json.RawMessage) (any, error) {
		time.Sleep(2 * bound)
		return goroutineID(), nil
	})
	p.Provider("gid", "", func(context.Context, json.RawMessage) (any, error) { return goroutineID(), nil })
	h := serve(t, p)
	h.initialize(1)
	ran := func(id int, ref string) string {
		t.Helper()
		h.call(id, wire.MethodProviderInvoke, invoke(ref))
		var res wire.OutputResult
		if err := json.Unmarshal(h.response(id).Result, &res); err != nil {
			t.Fatal(err)
		}
		return string(res.Output)
	}
	ran(2, "slow")
	first, second, third := ran(3, "gid"), ran(4, "gid"), ran(5, "gid")
	if first == second {
		t.Errorf("after a slow handler, the next request ran on the goroutine that read the one after it (%s)", first)
	}
	if second != third {
		t.Errorf("quick requests ran on goroutines %s and %s, want the reading one for both", second, third)
	}
}

// TestManyConcurrentCalls runs more concurrent calls than the workers kept
// idle, then more calls on the workers left; goleak (TestMain) checks that
// every worker ended with ServeIO.
func TestManyConcurrentCalls(t *testing.T) {
	const n = 3 * maxIdleWorkers
	started := make(chan struct{}, n)
	release := make(chan struct{})
	p := New("tester", "1.0.0")
	p.Provider("block", "", func(context.Context, json.RawMessage) (any, error) {
		started <- struct{}{}
		<-release
		return "released", nil
	})
	p.Provider("echo", "", func(_ context.Context, in json.RawMessage) (any, error) { return in, nil })
	h := serve(t, p)
	h.initialize(1)
	for i := range n {
		h.call(2+i, wire.MethodProviderInvoke, invoke("block"))
	}
	for range n {
		wait(t, started, "handler start")
	}
	close(release)
	got := map[string]bool{}
	for range n {
		m := h.recv()
		if string(m.Result) != `{"output":"released"}` {
			t.Fatalf("got %s", frame(m))
		}
		got[string(m.ID)] = true
	}
	if len(got) != n {
		t.Fatalf("%d distinct answers, want %d", len(got), n)
	}
	for i := range 2 * n {
		h.call(1000+i, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "echo", Input: json.RawMessage("1")})
		h.result(1000+i, `{"output":1}`)
	}
	h.inW.Close()
	if err := h.wait(); err != nil {
		t.Fatal(err)
	}
}
