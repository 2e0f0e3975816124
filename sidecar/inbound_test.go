//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// callerManifest runs the raw protocol 1.1 plugin testdata/plugins/caller.
const callerManifest = `{"format": 1, "name": "caller", "version": "1.0.0", "runtime": {"command": "./caller"}}`

// startCaller starts the caller plugin with opts, closed at the end of the
// test.
func startCaller(t *testing.T, opts Options) *Client {
	t.Helper()
	pkg := addPackage(t, t.TempDir(), "caller", callerManifest)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	c, err := Start(ctx, pkg, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { closeClient(t, c) })
	return c
}

// outcome is what the caller plugin reports of one of its requests.
type outcome struct {
	Output json.RawMessage `json:"output"`
	Error  *protocol.Error `json:"error"`
}

// runScript invokes the caller's "run" provider with script under ctx and
// decodes the outcome it reports.
func runScript(t *testing.T, ctx context.Context, c *Client, script string) outcome {
	t.Helper()
	out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "run", Input: json.RawMessage(script)})
	if err != nil {
		t.Fatalf("Invoke(run %s): %v", script, err)
	}
	var o outcome
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("outcome %s: %v", out, err)
	}
	return o
}

func (o outcome) String() string {
	if o.Error != nil {
		return o.Error.Error()
	}
	return string(o.Output)
}

// TestInboundCallAnswers holds how a capability/call is answered: the
// output as OnCall returned it, a *protocol.Error with its code, any other
// failure -32603, every message redacted; bad params, an unknown parent and
// any other plugin request are refused without calling OnCall.
func TestInboundCallAnswers(t *testing.T) {
	var got atomic.Pointer[Call]
	opts, _ := testOptions(t)
	opts.Redact = func(s string) string { return strings.ReplaceAll(s, "hunter2", "[redacted]") }
	opts.OnCall = func(ctx context.Context, call Call) (json.RawMessage, error) {
		got.Store(&call)
		switch call.Method {
		case "refuse":
			return nil, &protocol.Error{Code: protocol.CodeNotAuthorized, Message: fmt.Sprintf("no %s for you, hunter2", call.Capability)}
		case "boom":
			return nil, errors.New("boom: hunter2")
		case "garbage":
			return json.RawMessage(`{`), nil
		}
		return json.RawMessage(`{"echo":` + string(call.Input) + `}`), nil
	}
	c := startCaller(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	tests := []struct {
		name, script string
		want         string // the outcome's output, or its error as protocol.Error formats it
		call         *Call  // what OnCall saw; nil: it was not called
	}{
		{"output", `{"call":{"capability":"storage.kv","method":"get","input":{"key":"a"}}}`, `{"echo":{"key":"a"}}`,
			&Call{Client: c, Capability: "storage.kv", Method: "get", Input: json.RawMessage(`{"key":"a"}`)}},
		{"protocol error keeps its code", `{"call":{"capability":"billing","method":"refuse"}}`,
			`no billing for you, [redacted] (code -32005)`, &Call{Client: c, Capability: "billing", Method: "refuse"}},
		{"other error is internal", `{"call":{"capability":"x","method":"boom"}}`, `boom: [redacted] (code -32603)`,
			&Call{Client: c, Capability: "x", Method: "boom"}},
		{"output that is not JSON", `{"call":{"capability":"x","method":"garbage"}}`,
			`capability/call: the output is not valid JSON: unexpected end of JSON input (code -32603)`,
			&Call{Client: c, Capability: "x", Method: "garbage"}},
		{"no method", `{"call":{"capability":"x"}}`, `capability/call: params must name a capability and a method (code -32602)`, nil},
		{"unknown parent", `{"call":{"capability":"x","method":"get","parent":999}}`,
			`capability/call: parent 999 is not a host request in flight to plugin "caller" (code -32602)`, nil},
		{"parent that is no host id", `{"call":{"capability":"x","method":"get","parent":"hunter2"}}`,
			`capability/call: parent "[redacted]" is not a host request in flight to plugin "caller" (code -32602)`, nil},
		{"another request", `{"request":"host/hunter2"}`, `host method "host/[redacted]" is not available (code -32601)`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got.Store(nil)
			if o := runScript(t, ctx, c, tt.script); o.String() != tt.want {
				t.Errorf("outcome = %s, want %s", o, tt.want)
			}
			seen := got.Load()
			switch {
			case tt.call == nil && seen != nil:
				t.Errorf("OnCall was called with %+v", *seen)
			case tt.call != nil && (seen == nil || !sameCall(*seen, *tt.call)):
				t.Errorf("OnCall got %+v, want %+v", seen, *tt.call)
			}
		})
	}
}

func sameCall(a, b Call) bool {
	return a.Client == b.Client && a.Capability == b.Capability && a.Method == b.Method &&
		string(a.Input) == string(b.Input) && a.Parent == b.Parent
}

// TestInboundCallWithoutOnCall: a host that serves no calls answers
// capability/call -32601, as a 1.0 host does.
func TestInboundCallWithoutOnCall(t *testing.T) {
	opts, _ := testOptions(t)
	c := startCaller(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	o := runScript(t, ctx, c, `{"call":{"capability":"x","method":"get"}}`)
	if o.Error == nil || o.Error.Code != protocol.CodeMethodNotFound {
		t.Errorf("outcome = %s, want code %d", o, protocol.CodeMethodNotFound)
	}
}

// ctxKey tags the host's context in the parent tests.
type ctxKey struct{}

// TestInboundCallContext holds what a call's context derives from: with a
// parent, the values of the parent request's context and at most what is
// left of its timeout (which is not applied again); without one,
// Options.callTimeout.
func TestInboundCallContext(t *testing.T) {
	type seen struct {
		parent   bool
		value    any
		deadline time.Time
		own      bool // a WithCallTimeout is visible
	}
	calls := make(chan seen, 1)
	opts, _ := testOptions(t)
	opts.callTimeout = 7 * time.Second
	opts.OnCall = func(ctx context.Context, call Call) (json.RawMessage, error) {
		d, _ := ctx.Deadline()
		_, own := callTimeout(ctx)
		calls <- seen{parent: call.Parent, value: ctx.Value(ctxKey{}), deadline: d, own: own}
		return json.RawMessage(`1`), nil
	}
	c := startCaller(t, opts)
	tests := []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		script  string
		parent  bool
		value   any
		atMost  time.Duration // the deadline is at most this far from the call's start
		atLeast time.Duration // and at least this far
	}{
		{"parent with a call timeout", func() (context.Context, context.CancelFunc) {
			return WithCallTimeout(context.WithValue(context.Background(), ctxKey{}, "tag"), 5*time.Second), func() {}
		}, `{"call":{"capability":"x","method":"m","parent":true}}`, true, "tag", 5 * time.Second, 0},
		{"parent with a deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.WithValue(context.Background(), ctxKey{}, "deadline"), 4*time.Second)
		}, `{"call":{"capability":"x","method":"m","parent":true}}`, true, "deadline", 4 * time.Second, 0},
		{"no parent", func() (context.Context, context.CancelFunc) {
			return WithCallTimeout(context.WithValue(context.Background(), ctxKey{}, "tag"), time.Second), func() {}
		}, `{"call":{"capability":"x","method":"m"}}`, false, nil, 7 * time.Second, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			start := time.Now()
			if o := runScript(t, ctx, c, tt.script); o.String() != `1` {
				t.Fatalf("outcome = %s, want 1", o)
			}
			s := <-calls
			if s.parent != tt.parent || s.value != tt.value || s.own {
				t.Errorf("OnCall saw parent %v, value %v, own timeout %v; want %v, %v, false", s.parent, s.value, s.own, tt.parent, tt.value)
			}
			end := time.Now()
			if s.deadline.IsZero() || s.deadline.After(end.Add(tt.atMost)) || s.deadline.Before(start.Add(tt.atLeast)) {
				t.Errorf("deadline %v after the start, want within [%v, %v] of the call", s.deadline.Sub(start), tt.atLeast, tt.atMost)
			}
		})
	}
}

// TestInboundCallCancelled holds every way a call's context ends before
// OnCall does: the plugin's $/cancel (answered -32800), the parent
// withdrawn by the host, the parent's own timeout, the caller's crash, and
// Close. Each cause reaches OnCall at once, and OnCall's goroutine ends.
func TestInboundCallCancelled(t *testing.T) {
	tests := []struct {
		name   string
		script string
		run    func(t *testing.T, c *Client, script string, entered <-chan struct{}) // drives the call
		cause  error
	}{
		{"plugin cancels", `{"call":{"capability":"x","method":"m"},"cancel":true}`, func(t *testing.T, c *Client, script string, _ <-chan struct{}) {
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			if o := runScript(t, ctx, c, script); o.Error == nil || o.Error.Code != protocol.CodeRequestCancelled ||
				o.Error.Message != "capability/call cancelled: cancelled by the plugin" {
				t.Errorf("outcome = %s, want -32800", o)
			}
		}, errCallCancelled},
		{"host withdraws the parent", `{"call":{"capability":"x","method":"m","parent":true}}`,
			func(t *testing.T, c *Client, script string, entered <-chan struct{}) {
				ctx, cancel := context.WithCancel(context.Background())
				done := background(func() { waitFor(t, entered); cancel() })
				_, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "run", Input: json.RawMessage(script)})
				if !errors.Is(err, context.Canceled) {
					t.Errorf("Invoke = %v, want context.Canceled", err)
				}
				waitFor(t, done)
			}, errWithdrawn},
		{"parent times out", `{"call":{"capability":"x","method":"m","parent":true}}`,
			func(t *testing.T, c *Client, script string, _ <-chan struct{}) {
				ctx := WithCallTimeout(context.Background(), 2*time.Second) // time for the call to arrive on a loaded machine
				_, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "run", Input: json.RawMessage(script)})
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Invoke = %v, want context.DeadlineExceeded", err)
				}
			}, nil}, // the deadline or the parent's end, whichever comes first
		{"caller crashes", `{"call":{"capability":"x","method":"m"}}`,
			func(t *testing.T, c *Client, script string, entered <-chan struct{}) {
				ctx, cancel := context.WithTimeout(context.Background(), within)
				defer cancel()
				done := background(func() {
					_, _ = c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "run", Input: json.RawMessage(script)})
				})
				waitFor(t, entered)
				_, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "run", Input: json.RawMessage(`{"crash":true}`)})
				var ce *CrashError
				if !errors.As(err, &ce) {
					t.Errorf("Invoke = %v, want a *CrashError", err)
				}
				waitFor(t, done)
			}, errCallerStopped},
		{"Close", `{"call":{"capability":"x","method":"m"}}`,
			func(t *testing.T, c *Client, script string, entered <-chan struct{}) {
				ctx, cancel := context.WithTimeout(context.Background(), within)
				defer cancel()
				done := background(func() {
					_, _ = c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "run", Input: json.RawMessage(script)})
				})
				waitFor(t, entered)
				if err := c.Close(ctx); err != nil {
					t.Errorf("Close: %v", err)
				}
				waitFor(t, done)
			}, errCallerStopped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entered := make(chan struct{})
			causes := make(chan error, 1)
			opts, _ := testOptions(t)
			opts.OnCall = func(ctx context.Context, _ Call) (json.RawMessage, error) {
				close(entered)
				select {
				case <-ctx.Done():
					causes <- context.Cause(ctx)
					return nil, ctx.Err()
				case <-time.After(within):
					causes <- errors.New("OnCall's context never ended")
					return nil, errors.New("timed out")
				}
			}
			c := startCaller(t, opts)
			tt.run(t, c, tt.script, entered)
			var cause error
			select {
			case cause = <-causes:
			case <-time.After(within):
				t.Fatal("OnCall did not return")
			}
			switch {
			case tt.cause == errWithdrawn && !errors.Is(cause, context.Canceled) && !errors.Is(cause, errParentEnded):
				t.Errorf("cause = %v, want the parent's cancel or its end", cause)
			case tt.cause == errWithdrawn:
			case tt.cause == nil && !errors.Is(cause, context.DeadlineExceeded) && !errors.Is(cause, errParentEnded):
				t.Errorf("cause = %v, want the deadline or the parent's end", cause)
			case tt.cause != nil && !errors.Is(cause, tt.cause):
				t.Errorf("cause = %v, want %v", cause, tt.cause)
			}
		})
	}
}

// errWithdrawn stands for either cause of a call whose parent the host
// withdrew: the parent's context.Canceled, or errParentEnded when the
// host's request ended first (both race, and both are right).
var errWithdrawn = errors.New("the parent's cancel or its end")

// TestInboundCallCancelAnsweredAtOnce: the plugin's $/cancel is answered
// -32800 at once even when OnCall ignores its context (docs/protocol.md
// §5.8: a caller may wait for that answer), and OnCall's own answer, when
// it comes, is dropped: the next call is answered as usual.
func TestInboundCallCancelAnsweredAtOnce(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	opts, _ := testOptions(t)
	opts.OnCall = func(ctx context.Context, call Call) (json.RawMessage, error) {
		if calls.Add(1) == 1 {
			<-release // deaf to ctx
			return json.RawMessage(`"late"`), nil
		}
		return json.RawMessage(`"second"`), nil
	}
	c := startCaller(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	o := runScript(t, ctx, c, `{"call":{"capability":"x","method":"m"},"cancel":true}`)
	if o.Error == nil || o.Error.Code != protocol.CodeRequestCancelled {
		t.Fatalf("outcome = %s, want -32800 while OnCall still runs", o)
	}
	close(release)
	if o := runScript(t, ctx, c, `{"call":{"capability":"x","method":"m"}}`); string(o.Output) != `"second"` {
		t.Fatalf("next call's outcome = %s, want \"second\"", o)
	}
}

// background runs fn on a goroutine and returns a channel closed when it
// returned.
func background(fn func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	return done
}

// waitFor waits, boundedly, for ch to close.
func waitFor(t *testing.T, ch <-chan struct{}) {
	select {
	case <-ch:
	case <-time.After(within):
		t.Error("timed out waiting")
	}
}

// TestInboundCallBound: a plugin with maxInboundCalls calls in flight gets
// its next one refused at once, while the others run on.
func TestInboundCallBound(t *testing.T) {
	entered := make(chan struct{}, maxInboundCalls+1)
	release, fanned := make(chan struct{}), make(chan struct{})
	opts, _ := testOptions(t)
	opts.OnNotify = func(_ *Client, event string, data json.RawMessage) {
		n := wire.NotifyParams{Event: event, Data: data}
		if n.Event == "fanned-out" { // read after all its calls: each was admitted or refused
			close(fanned)
		}
	}
	opts.OnCall = func(ctx context.Context, _ Call) (json.RawMessage, error) {
		entered <- struct{}{}
		select {
		case <-release:
			return json.RawMessage(`"ok"`), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c := startCaller(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	done := make(chan outcome, 1)
	go func() {
		out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "run",
			Input: json.RawMessage(`{"call":{"capability":"x","method":"m"},"fanout":65}`)})
		if err != nil {
			t.Errorf("Invoke: %v", err)
		}
		done <- outcome{Output: out}
	}()
	for range maxInboundCalls {
		select {
		case <-entered:
		case <-ctx.Done():
			t.Fatal("timed out waiting for the calls to start")
		}
	}
	select {
	case <-fanned:
	case <-ctx.Done():
		t.Fatal("timed out waiting for the plugin to send its calls")
	}
	close(release)
	var outs []outcome
	if err := json.Unmarshal((<-done).Output, &outs); err != nil {
		t.Fatal(err)
	}
	var ok, refused int
	for _, o := range outs {
		switch {
		case o.Error == nil && string(o.Output) == `"ok"`:
			ok++
		case o.Error != nil && o.Error.Code == wire.CodeInternalError &&
			o.Error.Message == `capability/call: plugin "caller" has 64 calls in flight already, the most the host serves at once`:
			refused++
		default:
			t.Errorf("unexpected outcome %s", o)
		}
	}
	if ok != maxInboundCalls || refused != 1 || len(entered) != 0 {
		t.Errorf("%d served, %d refused, %d more started; want %d, 1, 0", ok, refused, len(entered), maxInboundCalls)
	}
}
