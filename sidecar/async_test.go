//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
)

// asyncOutcome is what InvokeAsync's done received, and how often.
type asyncOutcome struct {
	out json.RawMessage
	err error
}

// invokeAsync calls InvokeAsync and returns the channel done reports on;
// a second report fails the test.
func invokeAsync(t *testing.T, ctx context.Context, c *Client, params wire.ProviderInvokeParams) <-chan asyncOutcome {
	t.Helper()
	ch := make(chan asyncOutcome, 2)
	c.InvokeAsync(ctx, wire.MethodProviderInvoke, params, func(out json.RawMessage, err error) { ch <- asyncOutcome{out, err} })
	return ch
}

// once returns the one outcome on ch, failing the test if there is none
// within the bound or a second one follows.
func once(t *testing.T, ch <-chan asyncOutcome) asyncOutcome {
	t.Helper()
	o := recv(t, ch, "InvokeAsync's done")
	select {
	case again := <-ch:
		t.Fatalf("done called twice: %v, then %v", o, again)
	case <-time.After(50 * time.Millisecond):
	}
	return o
}

// TestInvokeAsync holds InvokeAsync to Invoke's outcomes, each reported
// once: the output; the plugin's error answer; the end of the caller's
// context, withdrawn with $/cancel; the call's own timeout; and the
// plugin's crash with a call in flight.
func TestInvokeAsync(t *testing.T) {
	t.Run("output", func(t *testing.T) {
		opts, _ := testOptions(t)
		c := startGood(t, opts)
		defer closeClient(t, c)
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		want, wantErr := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "echo", Input: json.RawMessage(`{"a":1}`)})
		o := once(t, invokeAsync(t, ctx, c, wire.ProviderInvokeParams{Ref: "echo", Input: json.RawMessage(`{"a":1}`)}))
		if string(o.out) != string(want) || (o.err == nil) != (wantErr == nil) {
			t.Errorf("InvokeAsync = %s, %v; Invoke = %s, %v", o.out, o.err, want, wantErr)
		}
		o = once(t, invokeAsync(t, ctx, c, wire.ProviderInvokeParams{Ref: "no-such-ref"}))
		_, wantErr = c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "no-such-ref"})
		if o.err == nil || wantErr == nil || o.err.Error() != wantErr.Error() {
			t.Errorf("InvokeAsync error %v, Invoke's %v", o.err, wantErr)
		}
	})
	t.Run("context and timeout", func(t *testing.T) {
		opts, _ := testOptions(t)
		opts.callTimeout = 300 * time.Millisecond
		notes := make(chan wire.NotifyParams, 4)
		opts.OnNotify = func(_ *Client, event string, data json.RawMessage) {
			notes <- wire.NotifyParams{Event: event, Data: data}
		}
		c, err := Start(context.Background(), installFixture(t, "no-answer"), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer closeClient(t, c)
		// The context's deadline, then the call's own timeout: each ends
		// the call and withdraws the request (requests 2 and 3, after
		// initialize), as TestCallNeverAnswered has it for Invoke.
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		for i, ctx := range []context.Context{ctx, context.Background()} {
			if o := once(t, invokeAsync(t, ctx, c, wire.ProviderInvokeParams{Ref: "x"})); !errors.Is(o.err, context.DeadlineExceeded) {
				t.Errorf("call %d: %v, want context.DeadlineExceeded", i, o.err)
			}
			if n := recv(t, notes, "$/cancel report"); n.Event != "cancelled" || string(n.Data) != strconv.Itoa(2+i) {
				t.Errorf("notification = %+v, want cancelled %d", n, 2+i)
			}
		}
		// Cancelled at once: the request may not even be written (then
		// it is dropped from the queue, and no $/cancel is sent).
		ctx, cancel = context.WithCancel(context.Background())
		ch := invokeAsync(t, WithCallTimeout(ctx, time.Hour), c, wire.ProviderInvokeParams{Ref: "x"})
		cancel()
		if o := once(t, ch); !errors.Is(o.err, context.Canceled) {
			t.Errorf("after cancel: %v, want context.Canceled", o.err)
		}
	})
	t.Run("crash", func(t *testing.T) {
		opts, _ := testOptions(t)
		c, err := Start(context.Background(), installFixture(t, "crash-in-call"), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer closeClient(t, c)
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		var ce *CrashError
		if o := once(t, invokeAsync(t, ctx, c, wire.ProviderInvokeParams{Ref: "x"})); !errors.As(o.err, &ce) {
			t.Errorf("crash: %v, want a *CrashError", o.err)
		}
		if o := once(t, invokeAsync(t, ctx, c, wire.ProviderInvokeParams{Ref: "x"})); !errors.As(o.err, &ce) {
			t.Errorf("after the crash: %v, want the *CrashError", o.err)
		}
	})
}
