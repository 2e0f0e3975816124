package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
)

// asyncCall is a request of InvokeAsync in flight: its pendingCall
// carries it instead of a channel, and whoever removes the pendingCall
// from Client.mu.pending (the response's delivery, the call's context or
// timeout, the client's end) completes it, once.
type asyncCall struct {
	c      *Client
	id     int64
	method string
	done   func(json.RawMessage, error)
	timer  *time.Timer // its own timeout, or nil
	stop   func() bool // stops the watch of its context
	ended  atomic.Bool
}

// InvokeAsync is Invoke without a goroutine waiting: it sends the request
// and returns; done is called once, with the output or the error Invoke
// would return, on the goroutine that ends the call: the reader that
// reads the response (done MUST NOT block it), a timer or context
// goroutine, the client's supervisor, or the caller's, before InvokeAsync
// returns, when the request cannot be sent. A client that is down (its
// plugin exited and is being torn down) waits for the terminal error on a
// goroutine, as Invoke would.
func (c *Client) InvokeAsync(ctx context.Context, method string, params any, done func(json.RawMessage, error)) {
	if err := ctx.Err(); err != nil {
		done(nil, c.named(method, context.Cause(ctx)))
		return
	}
	id := c.nextID.Add(1)
	frame, err := encodeRequest(id, method, c.untraced(params))
	if err != nil {
		done(nil, c.named(method, err))
		return
	}
	a := &asyncCall{c: c, id: id, method: method, done: done}
	pc := pendingCall{async: a, ctx: ctx}
	d, timed := c.ownTimeout(ctx)
	if timed {
		pc.due, pc.latest = c.clock(time.Now(), d)
		pc.timeout = d
	}
	switch err := c.register(id, pc, callNormal); {
	case err == errDown:
		go func() { done(c.Invoke(ctx, method, params)) }() // waits for the terminal error
		return
	case err != nil:
		done(nil, c.named(method, err))
		return
	}
	c.invoking(method)
	if timed {
		a.timer = time.AfterFunc(d, a.timedOut)
	}
	a.stop = context.AfterFunc(ctx, func() { a.expire(context.Cause(ctx)) })
	// Sent from a reading goroutine (a relay), the request does not wait
	// for room in the plugin's queue: past its hard bound it fails.
	switch err := c.send(ctx, frameAnswer, id, frame); {
	case err == nil:
	case errors.Is(err, errQueueFull):
		if c.take(id) {
			a.end(nil, c.named(method, c.queueFull(len(frame))))
		}
	case c.take(id):
		// As Invoke: the write failed, so the plugin is being stopped;
		// the call fails with the terminal error (the *CrashError), which
		// a goroutine waits for, bounded by ctx.
		go func() { a.end(nil, c.named(method, c.awaitTerminal(ctx, nil))) }()
	}
}

// take removes the pending call id and reports whether it was there: the
// caller then ends it.
func (c *Client) take(id int64) bool {
	c.mu.Lock()
	_, ok := c.mu.pending[id]
	delete(c.mu.pending, id)
	c.mu.Unlock()
	if ok {
		c.endChildren(id)
	}
	return ok
}

// expire ends a's call with cause (its context ended, or its timeout ran
// out) unless it ended already, and withdraws the request ($/cancel).
func (a *asyncCall) expire(cause error) {
	if a.c.take(a.id) {
		a.c.cancelRemote(a.id)
		a.end(nil, a.c.named(a.method, cause))
	}
}

// timedOut runs when a's own timeout fires: it re-arms the timer for what
// progress left the call (extended), or ends the call. a.timer is set:
// progress can extend the call only once it was sent, after a.timer was
// set.
func (a *asyncCall) timedOut() {
	if left, ok := a.c.extended(a.id); ok {
		a.timer.Reset(left)
		return
	}
	a.expire(context.DeadlineExceeded)
}

// answer ends a's call with the response m.
func (a *asyncCall) answer(m *wire.Message) {
	var res wire.OutputResult
	if err := decodeResponse(m, &res, a.c.opts.Redact); err != nil {
		a.end(nil, a.c.named(a.method, err))
		return
	}
	a.end(res.Output, nil)
}

// end stops a's watches and calls done, once.
func (a *asyncCall) end(out json.RawMessage, err error) {
	if !a.ended.CompareAndSwap(false, true) {
		return
	}
	if a.timer != nil {
		a.timer.Stop()
	}
	if a.stop != nil {
		a.stop()
	}
	a.done(out, err)
}
