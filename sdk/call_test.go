package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// TestCallErrors checks the error Call returns to the caller plugin's
// relay handler for each way a call ends without an output.
func TestCallErrors(t *testing.T) {
	tests := []struct {
		name  string
		host  string
		after func(t *testing.T, h *harness, c json.RawMessage) // c: the call's id, nil when none was sent
		check func(err error) bool
	}{
		{name: "error answer", host: "1.1.0",
			after: func(t *testing.T, h *harness, c json.RawMessage) {
				answerError(t, h, c, protocol.CodeNotAvailable, "down")
			},
			check: func(err error) bool {
				pe, ok := err.(*protocol.Error) // as is, not wrapped
				return ok && pe.Code == protocol.CodeNotAvailable && pe.Message == "down"
			}},
		{name: "malformed result", host: "1.1.0",
			after: func(t *testing.T, h *harness, c json.RawMessage) { answer(t, h, c, `[1]`) },
			check: func(err error) bool {
				return err != nil && strings.Contains(err.Error(), `call "storage.kv.get": malformed result [1]`)
			}},
		{name: "outer request cancelled", host: "1.1.0",
			after: func(t *testing.T, h *harness, c json.RawMessage) {
				// The plugin answers 12 cancelled and cancels its call,
				// in either order; the host answers the cancelled call,
				// as docs/protocol.md §5.8 has it.
				h.cancelCall(12)
				for range 2 {
					if m := h.recv(); m.Method == wire.MethodCancel {
						expectCancel(t, m, c)
						answerError(t, h, c, protocol.CodeRequestCancelled, "cancelled")
					}
				}
			},
			check: func(err error) bool { return errors.Is(err, context.Canceled) }},
		{name: "shutdown", host: "1.1.0",
			after: func(t *testing.T, h *harness, _ json.RawMessage) { h.call(13, wire.MethodShutdown, nil) },
			check: func(err error) bool { return errors.Is(err, ErrNotServing) }},
		{name: "end of input", host: "1.1.0",
			after: func(t *testing.T, h *harness, _ json.RawMessage) { h.inW.Close() },
			check: func(err error) bool { return errors.Is(err, ErrNotServing) }},
		{name: "1.0 host", host: "1.0.0",
			check: func(err error) bool {
				return errors.Is(err, ErrCallsUnsupported) && strings.Contains(err.Error(), "host speaks protocol 1.0.0")
			}},
		{name: "1.0 host, v prefix", host: "v1.0",
			check: func(err error) bool { return errors.Is(err, ErrCallsUnsupported) }},
		{name: "major only", host: "1",
			check: func(err error) bool { return errors.Is(err, ErrCallsUnsupported) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := make(chan error, 1)
			h := serve(t, callerPlugin(errs))
			h.call(1, wire.MethodInitialize, initParams(tt.host))
			h.response(1)
			relay(t, h, 12, "relay", getBuild)
			var c json.RawMessage
			if tt.after != nil {
				c = expectCall(t, h.recv(), `{"capability":"storage.kv","method":"get","input":{"key":"build"},"parent":12}`)
				tt.after(t, h, c)
			}
			if err := wait(t, errs, "the call's end"); !tt.check(err) {
				t.Fatalf("Call = %v (%T)", err, err)
			}
		})
	}
}

// TestCallRefusedLocally checks the calls refused before anything is
// sent: the next frame the host reads is the answer to a ping.
func TestCallRefusedLocally(t *testing.T) {
	p := New("tester", "1.0.0")
	if _, err := p.Call(context.Background(), "storage.kv", "get", nil); !errors.Is(err, ErrNotServing) {
		t.Fatalf("Call before ServeIO = %v, want ErrNotServing", err)
	}
	hookErr := make(chan error, 1)
	p.OnInitialize(func(ctx context.Context, _ protocol.InitializeParams) error {
		_, err := p.Call(ctx, "storage.kv", "get", nil)
		hookErr <- err
		return nil
	})
	h := serve(t, p)
	h.call(1, wire.MethodInitialize, initParams("1.1.0"))
	h.response(1)
	if err := wait(t, hookErr, "the hook's call"); !errors.Is(err, ErrHandshakeIncomplete) {
		t.Fatalf("Call in OnInitialize = %v, want ErrHandshakeIncomplete", err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name  string
		ctx   context.Context
		input any
		want  string
	}{
		{name: "context done", ctx: done, want: `call "storage.kv.get": context canceled`},
		{name: "unmarshalable input", ctx: context.Background(), input: func() {}, want: `call "storage.kv.get": marshal input: json: unsupported type`},
		{name: "invalid raw input", ctx: context.Background(), input: json.RawMessage(`{`), want: `call "storage.kv.get": marshal input:`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h.t = t
			if _, err := p.Call(tt.ctx, "storage.kv", "get", tt.input); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("Call = %v, want %q", err, tt.want)
			}
			pingNext(t, h, 2)
		})
	}
	h.t = t
	h.inW.Close()
	if err := h.wait(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Call(context.Background(), "storage.kv", "get", nil); !errors.Is(err, ErrNotServing) {
		t.Fatalf("Call after ServeIO = %v, want ErrNotServing", err)
	}
}

// TestCallRouting makes two calls at once from outside any handler and
// answers them in reverse order: each gets its own answer, and neither
// names a parent.
func TestCallRouting(t *testing.T) {
	p := New("tester", "1.0.0")
	h := serve(t, p)
	h.call(1, wire.MethodInitialize, initParams("1.1.0"))
	h.response(1)
	type result struct {
		out json.RawMessage
		err error
	}
	results := map[string]chan result{"a": make(chan result, 1), "b": make(chan result, 1)}
	ids := map[string]json.RawMessage{}
	for _, key := range []string{"a", "b"} {
		go func() {
			out, err := p.Call(context.Background(), "storage.kv", "get", key)
			results[key] <- result{out, err}
		}()
		ids[key] = expectCall(t, h.recv(), `{"capability":"storage.kv","method":"get","input":"`+key+`"}`)
	}
	if string(ids["a"]) == string(ids["b"]) {
		t.Fatalf("both calls have id %s", ids["a"])
	}
	for _, key := range []string{"b", "a"} {
		answer(t, h, ids[key], `{"output":"`+strings.ToUpper(key)+`"}`)
		if r := wait(t, results[key], "the call's answer"); r.err != nil || string(r.out) != `"`+strings.ToUpper(key)+`"` {
			t.Fatalf("call %s = %s, %v", key, r.out, r.err)
		}
	}
}

// TestCallParentFromDerivedContext checks that a call made on another
// goroutine with a context derived from the handler's names the handler's
// request as parent.
func TestCallParentFromDerivedContext(t *testing.T) {
	type key struct{}
	p := New("tester", "1.0.0")
	p.Provider("fanout", "", func(ctx context.Context, _ json.RawMessage) (any, error) {
		ctx, cancel := context.WithCancel(context.WithValue(ctx, key{}, "v"))
		defer cancel()
		out := make(chan json.RawMessage, 1)
		errc := make(chan error, 1)
		go func() {
			o, err := p.Call(ctx, "storage.kv", "get", nil)
			out <- o
			errc <- err
		}()
		return <-out, <-errc
	})
	h := serve(t, p)
	h.call(1, wire.MethodInitialize, initParams("1.1.0"))
	h.response(1)
	h.call(7, wire.MethodProviderInvoke, invoke("fanout"))
	c := expectCall(t, h.recv(), `{"capability":"storage.kv","method":"get","parent":7}`)
	answer(t, h, c, `{"output":1}`)
	h.result(7, `{"output":1}`)
}

// TestCallWriteFailure checks that a call whose request cannot be written
// fails with the write error and ends ServeIO.
func TestCallWriteFailure(t *testing.T) {
	p := New("tester", "1.0.0")
	h := serve(t, p)
	h.call(1, wire.MethodInitialize, initParams("1.1.0"))
	h.response(1)
	h.outR.Close()
	if _, err := p.Call(context.Background(), "storage.kv", "get", nil); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("Call = %v, want the write error", err)
	}
	if err := h.wait(); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("ServeIO = %v, want the write error", err)
	}
}

// TestCallReadsItsAnswer: a handler holding the read role reads its calls'
// answers on its own goroutine, so a handler that calls many times keeps
// the role (no move) however long it runs in all, as long as each stretch
// between its calls stays within the inline bound; and the next request
// still runs holding the role. A stretch past the bound loses the role to
// the timer, and makes the next request hand the role over at once, as
// any slow handler does.
func TestCallReadsItsAnswer(t *testing.T) {
	// Generous against a loaded machine: a stall of 90 ms between two
	// quick stretches would be needed to move the role, and the timer may
	// be 200 ms late for the slow one.
	const bound = 100 * time.Millisecond
	withBounds(t, bounds{drain: drainWait, cancel: cancelWait, inline: bound})
	tests := []struct {
		name      string
		calls     int
		pause     time.Duration // between two calls
		wantMoves bool
	}{
		{name: "many quick stretches", calls: 30, pause: bound / 10}, // 30 x 10 ms > bound in all
		{name: "a stretch past the bound", calls: 2, pause: 3 * bound, wantMoves: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New("caller", "1.0.0")
			p.Provider("loop", "calls storage.kv's get several times", func(ctx context.Context, _ json.RawMessage) (any, error) {
				for i := range tt.calls {
					if i > 0 {
						time.Sleep(tt.pause)
					}
					if _, err := p.Call(ctx, "storage.kv", "get", nil); err != nil {
						return nil, err
					}
				}
				return "done", nil
			})
			h := serve(t, p)
			h.call(1, wire.MethodInitialize, initParams("1.1.0"))
			h.response(1)
			h.call(2, wire.MethodProviderInvoke, invoke("loop"))
			for range tt.calls {
				c := expectCall(t, h.recv(), `{"capability":"storage.kv","method":"get","parent":2}`)
				answer(t, h, c, `{"output":1}`)
			}
			expectResult(t, h.recv(), 2, `{"output":"done"}`)
			p.mu.Lock()
			sc := p.mu.serving.sched
			p.mu.Unlock()
			if moves := sc.moves.Load(); (moves > 0) != tt.wantMoves {
				t.Errorf("the role moved %d times, want moves: %v", moves, tt.wantMoves)
			}
			if slow := sc.slow.Load(); slow != tt.wantMoves {
				t.Errorf("slow = %v after the handler, want %v (true hands the next request over)", slow, tt.wantMoves)
			}
			h.inW.Close()
			if err := h.wait(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
