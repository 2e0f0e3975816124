package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// maxInboundCalls bounds the capability/call requests of one plugin that
// the client serves at once. One more is answered at once with
// wire.CodeInternalError, and no goroutine is started for it.
const maxInboundCalls = 64

// Call is a capability/call request from a plugin (protocol 1.1,
// docs/protocol.md §5.11), as Options.OnCall receives it. Its strings are
// the plugin's, not redacted: quote them through Options.Redact.
type Call struct {
	// Client is the calling plugin's client (its Name and ID tell who
	// calls).
	Client *Client
	// Capability, Method and Input are the request's params (Input nil
	// when absent).
	Capability string
	Method     string
	Input      json.RawMessage
	// Parent is set when the call named a host request in flight to this
	// plugin as its parent: the call's context then derives from that
	// request's (see Options.OnCall).
	Parent bool
	// Stream is set when the call asked for a stream (docs/protocol.md
	// §5.12): OnCall sends the chunks through it before it returns.
	Stream *CallStream
}

// Causes of an inbound call's end, as context.Cause reports them.
var (
	// errCallCancelled: the plugin sent $/cancel for its call.
	errCallCancelled = errors.New("cancelled by the plugin")
	// errParentEnded: the host request the call derives from was
	// answered, timed out or was withdrawn.
	errParentEnded = errors.New("the request it serves ended")
	// errCallerStopped: the caller crashed, faulted or is being closed.
	errCallerStopped = errors.New("the calling plugin stopped")
)

// inbound is one capability/call in flight, under Client.mu.
type inbound struct {
	parent int64                   // the host request it derives from; 0 for none
	cancel context.CancelCauseFunc // nil until its context exists (admit)
	cause  error                   // a cancel asked for before cancel was set
	stream *CallStream             // the stream it asked for, or nil; set before it is recorded
	// answered is set once the call was answered cancelled on the
	// plugin's $/cancel, before its handler returned (cancelCall): the
	// handler's own answer is then dropped.
	answered bool
}

// serveCall admits a capability/call from the reading goroutine and serves
// it on a call worker (an idle one, else a new one), which the client
// waits for. Bad params, a duplicate id, a parent that is not in flight, a
// call over the bound and a call made while the plugin's queue is over its
// budget (Options.Limits.QueueBytes: the plugin has not read what the host
// owes it) are answered at once. A plugin that does not read its answers
// does not get more calls served: their answers (a host handler's copy of
// its output, say) would be made only to be refused.
func (c *Client) serveCall(m *wire.Message) {
	if !c.uses(wire.HasCalls) {
		c.unannounced(wire.HasCalls, "its capability/call is answered -32601")
		c.reply(m.ID, &protocol.Error{Code: protocol.CodeMethodNotFound, Message: fmt.Sprintf(
			"capability/call: plugin %q did not announce the %q feature in initialize", c.Name(), wire.FeatureCalls)})
		return
	}
	var p wire.CapabilityCallParams
	if err := wire.Decode(m.Params, &p); err != nil || p.Capability == "" || p.Method == "" {
		msg := "capability/call: params must name a capability and a method"
		if err != nil {
			msg += ": " + c.redact(err.Error())
		}
		c.reply(m.ID, &protocol.Error{Code: protocol.CodeInvalidParams, Message: msg})
		return
	}
	if over, queued := c.out.overBudget(); over {
		c.reply(m.ID, &protocol.Error{Code: wire.CodeInternalError, Message: c.redact(fmt.Sprintf(
			"capability/call: not served: %v: %d bytes already queued for plugin %q, which reads its input too slowly (budget %d bytes)",
			errQueueFull, queued, c.Name(), c.opts.queueBytes))})
		return
	}
	var stream *CallStream
	if p.Stream != nil {
		var perr *protocol.Error
		if stream, perr = c.callStream(m.ID, p.Stream); perr != nil {
			c.reply(m.ID, perr)
			return
		}
	}
	key := callKey(m.ID)
	ctx, perr := c.admit(key, p.Parent, stream)
	if perr != nil {
		c.reply(m.ID, perr)
		return
	}
	call := Call{Client: c, Capability: p.Capability, Method: p.Method, Input: p.Input,
		Parent: hasParent(p.Parent), Stream: stream}
	c.used(wire.HasCalls)
	if stream != nil {
		c.used(wire.HasStreams)
	}
	ctx = c.callTrace(ctx, p.Traceparent)
	if stream == nil && c.opts.OnCallAsync != nil {
		id := m.ID
		if c.opts.OnCallAsync(ctx, call, func(out json.RawMessage, err error) { c.answerCall(ctx, id, key, out, err) }) {
			return
		}
	}
	j := callJob{ctx: ctx, id: m.ID, key: key, call: call}
	if c.callJobs == nil {
		c.callJobs = make(chan callJob)
	}
	select {
	case c.callJobs <- j: // an idle worker serves it
	default:
		c.wg.Add(1) // from the reader, which wg counts: always before the supervisor waits
		go c.callWorker(c.callJobs, j)
	}
}

// callStream returns the stream a capability/call asks for with params
// p, or the error that answers it: the plugin did not announce the
// "streams" feature (-32602), or p is invalid.
func (c *Client) callStream(id json.RawMessage, p *wire.StreamParams) (*CallStream, *protocol.Error) {
	if !c.uses(wire.HasStreams) {
		c.unannounced(wire.HasStreams, "its capability/call asking for a stream is answered -32602")
		return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf(
			"capability/call: stream: plugin %q did not announce the %q feature in initialize", c.Name(), wire.FeatureStreams)}
	}
	return c.newCallStream(id, p)
}

// callTrace returns ctx carrying tp, the traceparent of a capability/call
// (the plugin's span: checked, wire.WithTraceparent keeps only a valid
// one, and carried to the handler and the observer), unless it is empty
// or the plugin did not announce the "trace" feature.
func (c *Client) callTrace(ctx context.Context, tp string) context.Context {
	switch {
	case tp == "":
		return ctx
	case !c.uses(wire.HasTrace):
		c.unannounced(wire.HasTrace, "the traceparent of its capability/call is ignored")
		return ctx
	}
	c.used(wire.HasTrace)
	return wire.WithTraceparent(ctx, tp)
}

// maxIdleCallWorkers bounds the goroutines of one client that wait for
// the plugin's next capability/call after serving one. Reusing one spares
// a call the start of a goroutine and the growth of its stack (the path
// through the kernel to a provider is deep); a plugin that never calls
// has none.
const maxIdleCallWorkers = 2

// callJob is one admitted capability/call, for a call worker to serve.
type callJob struct {
	ctx  context.Context
	id   json.RawMessage
	key  string
	call Call
}

// callWorker serves j, then, while fewer than maxIdleCallWorkers others
// wait, waits for the next call on jobs (the reader's Client.callJobs)
// and serves it. Waiting workers end with the readers: no call comes
// after them.
func (c *Client) callWorker(jobs <-chan callJob, j callJob) {
	defer c.wg.Done()
	for {
		c.runCall(j.ctx, j.id, j.key, j.call)
		if c.idleCallWorkers.Add(1) > maxIdleCallWorkers {
			c.idleCallWorkers.Add(-1)
			return
		}
		select {
		case j = <-jobs:
			c.idleCallWorkers.Add(-1)
		case <-c.readersDone:
			c.idleCallWorkers.Add(-1)
			return
		}
	}
}

// callKey is the key of a plugin's request id in Client.mu.inbound: its
// JSON text without surrounding space.
func callKey(id json.RawMessage) string { return string(bytes.TrimSpace(id)) }

func hasParent(parent json.RawMessage) bool {
	p := bytes.TrimSpace(parent)
	return len(p) > 0 && !bytes.Equal(p, []byte("null"))
}

// admit registers the call key (with the stream it asked for, if any) and
// returns its context: derived from the parent's context (its values;
// cancelled with it), with the parent's remaining deadline, or, without a
// parent, bounded by the call timeout alone. The parent's
// WithCallTimeout is hidden, as the deadline carries what is left of it;
// that deadline needs no timer of its own, as the parent's timeout ends
// the parent at that time, which cancels the call (endChildren). The
// context is built outside the lock; a cancel that comes in between is
// applied once it exists.
func (c *Client) admit(key string, parent json.RawMessage, stream *CallStream) (context.Context, *protocol.Error) {
	rec := &inbound{stream: stream}
	base, due, perr := c.reserve(key, parent, rec)
	if perr != nil {
		perr.Message = c.redact(perr.Message) // it quotes the plugin's id or parent
		return nil, perr
	}
	ctx, cancelCause := context.WithCancelCause(hiddenTimeout{Context: base, due: due})
	cancel := cancelCause
	if rec.parent == 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, c.opts.callTimeout)
		cancel = func(cause error) { cancelCause(cause); stop() }
	}
	c.mu.Lock()
	early := rec.cause
	rec.cancel = cancel
	c.mu.Unlock()
	if early != nil {
		cancel(early)
	}
	return ctx, nil
}

// reserve checks a call against the client's stage (only an up plugin's
// calls are served), the bound, the ids in flight and its parent, and
// records rec under key. It returns the parent's context and the end of
// its own timeout (zero when its context's deadline alone bounds it). Its
// refusals quote the plugin's text unredacted: the lock is held (admit
// redacts them).
func (c *Client) reserve(key string, parent json.RawMessage, rec *inbound) (context.Context, time.Time, *protocol.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.mu.state.stage.up():
		return nil, time.Time{}, &protocol.Error{Code: protocol.CodeRequestCancelled, Message: "capability/call: the host is stopping this plugin"}
	case c.mu.inbound[key] != nil:
		return nil, time.Time{}, &protocol.Error{Code: wire.CodeInvalidRequest,
			Message: fmt.Sprintf("capability/call: request id %s is already in flight", key)}
	case len(c.mu.inbound) >= maxInboundCalls:
		return nil, time.Time{}, &protocol.Error{Code: wire.CodeInternalError,
			Message: fmt.Sprintf("capability/call: plugin %q has %d calls in flight already, the most the host serves at once", c.Name(), maxInboundCalls)}
	}
	base, due := context.Background(), time.Time{}
	if hasParent(parent) {
		id, err := strconv.ParseInt(string(bytes.TrimSpace(parent)), 10, 64)
		p, ok := c.mu.pending[id]
		if err != nil || id == 0 || !ok {
			return nil, time.Time{}, &protocol.Error{Code: protocol.CodeInvalidParams,
				Message: fmt.Sprintf("capability/call: parent %s is not a host request in flight to plugin %q", parent, c.Name())}
		}
		rec.parent, base, due = id, p.ctx, p.due
	}
	if c.mu.inbound == nil {
		c.mu.inbound = map[string]*inbound{}
	}
	c.mu.inbound[key] = rec
	return base, due, nil
}

// runCall serves one admitted call and answers it: the output, or the
// error (a *protocol.Error keeps its code; a call whose context ended is
// -32800; anything else -32603), its message and data redacted.
func (c *Client) runCall(ctx context.Context, id json.RawMessage, key string, call Call) {
	out, err := c.opts.OnCall(ctx, call)
	c.answerCall(ctx, id, key, out, err)
}

// answerCall answers the call id (key) with OnCall's (or OnCallAsync's)
// outcome, unless it was answered cancelled already, and forgets it. An
// output is counted in the plugin's queue before it is encoded
// (outQueue.reserve): one that would take the queue past its hard bound
// is answered with a short error instead, without the copy.
func (c *Client) answerCall(ctx context.Context, id json.RawMessage, key string, out json.RawMessage, err error) {
	if err == nil {
		n := int64(wire.OutputResultSize(id, out) + 1)
		switch err = c.out.reserve(n); {
		case err == nil:
			var frame []byte
			if frame, err = encodeOutput(id, out, n); err != nil {
				c.out.release(n)
				break // answered with the encoding error
			}
			if c.finishCall(key) {
				_ = c.sendReserved(frame, n) // fails only once the queue is closed
			} else {
				c.out.release(n)
			}
			return
		case errors.Is(err, errQueueFull):
			// The answer does not fit: the plugin is told why, in a few
			// bytes, instead of the host holding it.
			if c.finishCall(key) {
				c.reply(id, &protocol.Error{Code: wire.CodeInternalError, Message: c.redact(c.queueFull(int(n)).Error())})
			}
			return
		default: // the queue is closed: the plugin is stopping
			c.finishCall(key)
			return
		}
	}
	perr := c.callError(ctx, err)
	if c.finishCall(key) {
		c.reply(id, perr)
	}
}

// encodeOutput encodes the frame of the answer {"output": out} to request
// id ({} for no output), out compacted, newline included, in a buffer of
// size bytes (at least wire.OutputResultSize and the newline).
func encodeOutput(id, out json.RawMessage, size int64) ([]byte, error) {
	frame, err := wire.AppendOutputResult(make([]byte, 0, size), id, out)
	if err != nil {
		return nil, fmt.Errorf("capability/call: the output is not valid JSON: %w", err)
	}
	return append(frame, '\n'), nil
}

// callError is the error answer to a call that failed with err.
func (c *Client) callError(ctx context.Context, err error) *protocol.Error {
	var pe *protocol.Error
	switch {
	case errors.As(err, &pe):
		return c.redact.errorAnswer(pe)
	case ctx.Err() != nil:
		return &protocol.Error{Code: protocol.CodeRequestCancelled,
			Message: c.redact("capability/call cancelled: " + context.Cause(ctx).Error())}
	}
	return &protocol.Error{Code: wire.CodeInternalError, Message: c.redact(err.Error())}
}

// finishCall forgets a call whose handler returned (a later $/cancel for
// its id is ignored, and the id may be reused), releases its context, and
// reports whether the handler's answer is to be sent: not when the call
// was answered cancelled already (cancelCall).
func (c *Client) finishCall(key string) bool {
	c.mu.Lock()
	rec := c.mu.inbound[key]
	delete(c.mu.inbound, key)
	c.mu.Unlock()
	if rec != nil && rec.cancel != nil {
		rec.cancel(context.Canceled)
	}
	return rec != nil && !rec.answered
}

// cancelCall cancels the call the plugin's $/cancel names, if it is in
// flight, and answers it at once with -32800 (docs/protocol.md §5.8), so
// that a caller gets its answer even from a handler that ignores its
// context; the handler's own answer is dropped. A call with a stream is
// only cancelled: its stream's end answers it (§5.12). Until its handler
// returns, the call still counts against maxInboundCalls and its id
// stays in use. It reports whether the call was in flight.
func (c *Client) cancelCall(id json.RawMessage) bool {
	key := callKey(id)
	c.mu.Lock()
	rec := c.mu.inbound[key]
	answer := rec != nil && rec.stream == nil && !rec.answered
	if answer {
		rec.answered = true
	}
	c.mu.Unlock()
	c.cancelInbound(errCallCancelled, func(k string, _ *inbound) bool { return k == key })
	if answer {
		c.reply(json.RawMessage(key), &protocol.Error{Code: protocol.CodeRequestCancelled,
			Message: c.redact("capability/call cancelled: " + errCallCancelled.Error())})
	}
	return rec != nil
}

// endChildren cancels the calls derived from the host request id, which
// ended. It costs nothing while no call is in flight.
func (c *Client) endChildren(id int64) {
	c.cancelInbound(errParentEnded, func(_ string, rec *inbound) bool { return rec.parent == id })
}

// endInbound cancels every call in flight: the plugin stopped.
func (c *Client) endInbound() {
	c.cancelInbound(errCallerStopped, func(string, *inbound) bool { return true })
}

// cancelInbound cancels, with cause, the calls in flight match accepts,
// outside the lock. A call whose context is not built yet is cancelled as
// soon as it is (admit).
func (c *Client) cancelInbound(cause error, match func(string, *inbound) bool) {
	c.mu.Lock()
	if len(c.mu.inbound) == 0 {
		c.mu.Unlock()
		return
	}
	var cancels []context.CancelCauseFunc
	for key, rec := range c.mu.inbound {
		switch {
		case !match(key, rec):
		case rec.cancel != nil:
			cancels = append(cancels, rec.cancel)
		case rec.cause == nil:
			rec.cause = cause
		}
	}
	c.mu.Unlock()
	for _, cancel := range cancels {
		cancel(cause)
	}
}

// hiddenTimeout is the base of an inbound call's context: the parent's
// values, except its WithCallTimeout, whose end, due, is the call's
// deadline instead (a callee must not get the whole timeout again).
type hiddenTimeout struct {
	context.Context
	due time.Time // zero: the parent's own deadline, if any
}

// Deadline is due, when set, else the parent's deadline.
func (h hiddenTimeout) Deadline() (time.Time, bool) {
	if !h.due.IsZero() {
		return h.due, true
	}
	return h.Context.Deadline()
}

func (h hiddenTimeout) Value(key any) any {
	if key == (callTimeoutKey{}) {
		return nil
	}
	return h.Context.Value(key)
}
