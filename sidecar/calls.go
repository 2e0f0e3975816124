package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// callKind says how a request is queued and when it is allowed.
type callKind int

const (
	callNormal   callKind = iota
	callUrgent            // ping: written before queued ordinary calls
	callInit              // initialize: the only request before the handshake
	callShutdown          // shutdown: allowed while Close runs
)

// Call sends the request method with params and decodes the result into
// result (which may be nil to discard it).
//
// ctx bounds the call; without a deadline, a timeout of 30s applies
// (or the timeout of WithCallTimeout, which applies even under a deadline).
// When ctx is done first, Call sends $/cancel for the request (unless it was
// still queued and never written), returns at once with an error wrapping
// context.Cause(ctx), and drops the plugin's late answer. An error answer
// is returned as a *protocol.Error (errors.As) wrapped with the plugin name
// and method. A crash returns the *CrashError; a call after Close returns an
// error wrapping ErrClosed.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	return c.named(method, c.roundTrip(ctx, method, params, result, callNormal))
}

// Intercept runs the plugin's interceptor at point on payload and returns
// its decision, which is checked to be one of the protocol's decisions
// (an invalid one is an error quoting it, redacted). The traceparent ctx
// carries (docs/protocol.md §5.13), if any, goes with the request. It
// fails as Call does.
func (c *Client) Intercept(ctx context.Context, point string, payload json.RawMessage) (protocol.InterceptResult, error) {
	var res protocol.InterceptResult
	params := wire.InterceptParams{Point: point, Payload: payload, Traceparent: wire.Traceparent(ctx)}
	err := c.roundTrip(ctx, wire.MethodIntercept, c.untraced(params), &res, callNormal)
	if err != nil {
		return protocol.InterceptResult{}, c.named(wire.MethodIntercept, err)
	}
	switch res.Decision {
	case protocol.DecisionContinue, protocol.DecisionModify, protocol.DecisionDeny:
		return res, nil
	}
	return protocol.InterceptResult{}, fmt.Errorf("plugin %q: %s %q: invalid decision %q", c.Name(), wire.MethodIntercept, point, c.redact(res.Decision))
}

// Invoke calls a method whose result is {"output": ...} (strategy/invoke,
// provider/invoke, action/run, contribution/invoke; docs/protocol.md §5)
// and returns the output, nil when absent. It fails as Call does.
func (c *Client) Invoke(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var res wire.OutputResult
	c.invoking(method)
	if err := c.roundTrip(ctx, method, c.untraced(params), &res, callNormal); err != nil {
		return nil, c.named(method, err)
	}
	return res.Output, nil
}

// WithCallTimeout returns a copy of ctx under which every Client call times
// out after d, counted from the call's start, instead of after
// the call timeout; a deadline of ctx itself still applies, whichever
// comes first, and a call that runs out of d fails with
// context.DeadlineExceeded as under context.WithTimeout. Unlike
// context.WithTimeout it starts no timer and needs no cancel: each call arms
// a pooled timer of its own. The kernel bounds each dispatched call this
// way (a timer per context.WithTimeout cost about 10 % of an interceptor
// chain, BENCHMARKS.md).
func WithCallTimeout(ctx context.Context, d time.Duration) context.Context {
	return &callTimeoutCtx{Context: ctx, d: d}
}

// callTimeoutCtx is the context of WithCallTimeout.
type callTimeoutCtx struct {
	context.Context
	d time.Duration
}

// callTimeoutKey finds a callTimeoutCtx under contexts derived from it.
type callTimeoutKey struct{}

func (c *callTimeoutCtx) Value(key any) any {
	if key == (callTimeoutKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// ownTimeout returns the timeout a call under ctx arms itself, and
// whether it arms one: WithCallTimeout's, else the call timeout when ctx
// has no deadline (a deadline of ctx alone bounds it otherwise).
func (c *Client) ownTimeout(ctx context.Context) (time.Duration, bool) {
	if d, own := callTimeout(ctx); own {
		return d, true
	}
	if _, ok := ctx.Deadline(); ok {
		return 0, false
	}
	return c.opts.callTimeout, true
}

// callTimeout returns the timeout WithCallTimeout set on ctx, if any.
func callTimeout(ctx context.Context) (time.Duration, bool) {
	tc, ok := ctx.(*callTimeoutCtx)
	if !ok {
		tc, ok = ctx.Value(callTimeoutKey{}).(*callTimeoutCtx)
	}
	if !ok {
		return 0, false
	}
	return tc.d, true
}

// named wraps the error of a call, other than a crash (which names the
// plugin already), with the plugin name and method.
func (c *Client) named(method string, err error) error {
	if err == nil || isCrash(err) {
		return err
	}
	return fmt.Errorf("plugin %q: %s: %w", c.Name(), method, err)
}

// isCrash reports whether err is a *CrashError. (A function of its own,
// so that the successful call does not allocate the target of errors.As.)
func isCrash(err error) bool {
	var ce *CrashError
	return errors.As(err, &ce)
}

// roundTrip runs one request: the frame is encoded, the call registered
// and the frame sent, then the answer awaited. Its errors are the *protocol.Error answered, the
// *CrashError or ErrClosed, context.Cause(ctx) (context.DeadlineExceeded
// when the call timeout ran out), or an encoding error.
func (c *Client) roundTrip(ctx context.Context, method string, params, result any, kind callKind) error {
	var timeout <-chan time.Time
	var t *time.Timer
	pc := pendingCall{ctx: ctx}
	if d, ok := c.ownTimeout(ctx); ok {
		pc.due, pc.latest = c.clock(time.Now(), d)
		if kind == callNormal { // progress extends no ping, handshake or shutdown
			pc.timeout = d
		}
		t = startTimer(d)
		defer stopTimer(t)
		timeout = t.C
	}
	id := c.nextID.Add(1)
	frame, err := encodeRequest(id, method, params)
	if err != nil {
		return err
	}
	ch := replyChans.Get().(chan *wire.Message)
	pc.ch = ch
	if err := c.register(id, pc, kind); err != nil {
		replyChans.Put(ch)
		if err == errDown {
			return c.awaitTerminal(ctx, timeout)
		}
		return err
	}
	if kind == callInit {
		c.initID.Store(id)
	}
	fk := frameWait
	if kind == callUrgent {
		fk = frameUrgent
	}
	if err := c.send(ctx, fk, id, frame); err != nil {
		c.unregister(id)
		if ctx.Err() != nil { // it waited for room in the queue until ctx ended
			return context.Cause(ctx)
		}
		return c.awaitTerminal(ctx, timeout)
	}
	// ch goes back to its pool only once its one message was received:
	// after unregister, deliver may still be sending to it.
	for {
		select {
		case m := <-ch:
			replyChans.Put(ch)
			return decodeResponse(m, result, c.opts.Redact)
		case <-c.dead:
			c.unregister(id)
			return c.terminalErr()
		case <-ctx.Done():
			c.unregister(id)
			c.cancelRemote(id)
			return context.Cause(ctx)
		case <-timeout:
			if left, ok := c.extended(id); ok {
				t.Reset(left)
				continue
			}
			c.unregister(id)
			c.cancelRemote(id)
			return context.DeadlineExceeded
		}
	}
}

// replyChans pools the channels a call receives its response on.
var replyChans = sync.Pool{New: func() any { return make(chan *wire.Message, 1) }}

// timers pools the timers of the call timeout, which spare a call
// without a deadline a context.WithTimeout.
var timers sync.Pool

func startTimer(d time.Duration) *time.Timer {
	if t, ok := timers.Get().(*time.Timer); ok {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

// stopTimer stops t and pools it: once stopped, a timer's channel delivers
// nothing stale (Go 1.23 timers).
func stopTimer(t *time.Timer) {
	t.Stop()
	timers.Put(t)
}

// encodeRequest returns the newline-terminated frame of a request: the
// dispatch params are appended (wire.AppendDispatchRequest), any other
// params marshalled once and the frame assembled around them.
func encodeRequest(id int64, method string, params any) ([]byte, error) {
	if frame, ok, err := wire.AppendDispatchRequest(nil, id, method, params); ok {
		if err != nil {
			return nil, fmt.Errorf("encode params: %w", err)
		}
		return append(frame, '\n'), nil
	}
	var raw []byte
	if params != nil {
		var err error
		if raw, err = json.Marshal(params); err != nil {
			return nil, fmt.Errorf("encode params: %w", err)
		}
	}
	frame := wire.AppendRequest(make([]byte, 0, len(raw)+len(method)+80), id, method, raw)
	return append(frame, '\n'), nil
}

// encodeFrame encodes m as one newline-terminated frame.
func encodeFrame(m *wire.Message) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pendingCall is a host request in flight: where its answer goes, and
// what a capability/call naming it as its parent derives from.
type pendingCall struct {
	ch    chan *wire.Message
	async *asyncCall      // InvokeAsync's, instead of ch
	ctx   context.Context // the call's context
	due   time.Time       // when its own timeout runs out; zero: ctx's deadline bounds it
	// timeout is the own timeout the call started with, by which each
	// $/progress extends due (from the time of the progress), up to
	// latest; zero when progress extends nothing (progress.go).
	timeout time.Duration
	latest  time.Time
}

// register records a pending call, unless the client is terminal or
// closing (but for Close's shutdown), or the plugin is down (errDown).
func (c *Client) register(id int64, p pendingCall, kind callKind) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st := c.mu.state.stage; {
	case st.terminal() || (st == stageClosing && kind != callShutdown):
		return c.terminalErrLocked()
	case st.down():
		return errDown
	}
	c.mu.pending[id] = p
	return nil
}

// errDown is register's answer while a plugin that exited or faulted is
// torn down: the call waits for the terminal error (awaitTerminal).
var errDown = errors.New("plugin down")

// callWaitsHook, if set (by tests only), runs when a call starts waiting
// in awaitTerminal.
var callWaitsHook func()

// awaitTerminal returns the error of a call that could not be sent: once
// the plugin is down, the *CrashError when the client becomes terminal
// (bounded by the call's context and timeout, like a call in flight);
// while Close runs, or once terminal, the terminal error at once.
func (c *Client) awaitTerminal(ctx context.Context, timeout <-chan time.Time) error {
	c.mu.Lock()
	wait := c.mu.state.stage.down()
	c.mu.Unlock()
	if !wait {
		return c.terminalErr()
	}
	if callWaitsHook != nil {
		callWaitsHook()
	}
	select {
	case <-c.dead:
		return c.terminalErr()
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-timeout:
		return context.DeadlineExceeded
	}
}

// unregister forgets a call that ended without its answer, and cancels
// the plugin's calls derived from it.
func (c *Client) unregister(id int64) {
	c.mu.Lock()
	delete(c.mu.pending, id)
	c.mu.Unlock()
	c.endChildren(id)
}

// terminalErr returns the error a call fails with once the client is
// closing or dead: the *CrashError, or ErrClosed.
func (c *Client) terminalErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.terminalErrLocked()
}

func (c *Client) terminalErrLocked() error {
	var ce *CrashError
	if errors.As(c.mu.err, &ce) {
		return ce
	}
	return ErrClosed
}

// cancelRemote withdraws a request: dropped from the queue if it was never
// written, otherwise cancelled with $/cancel.
func (c *Client) cancelRemote(id int64) {
	if c.out.remove(id) {
		return
	}
	frame, err := encodeFrame(&wire.Message{
		JSONRPC: wire.JSONRPCVersion,
		Method:  wire.MethodCancel,
		Params:  json.RawMessage(`{"id":` + strconv.FormatInt(id, 10) + `}`),
	})
	if err == nil {
		_ = c.send(context.Background(), frameUrgent, 0, frame)
	}
}

// decodeResponse decodes a result into result, or returns the error
// answer with its message and data redacted.
func decodeResponse(m *wire.Message, result any, redact func(string) string) error {
	if m.Error != nil {
		return redactor(redact).errorAnswer(m.Error)
	}
	if result == nil {
		return nil
	}
	if err := wire.Decode(m.Result, result); err != nil {
		return fmt.Errorf("decode result: %w", err)
	}
	return nil
}

// readLoop reads the plugin's stdout until it fails, dispatching each
// message. Any failure is a fault that stops the plugin.
func (c *Client) readLoop() {
	defer c.readerDone()
	defer c.limit.flush()
	fr := wire.NewFrameReader(c.proc.Stdout, c.opts.maxFrame)
	fr.SetRedact(c.opts.Redact)
	if c.tracing {
		defer c.frameLimit.flush()
		fr.SetTrace(func(line []byte) { c.traceFrame("recv", line) })
	}
	for {
		var chunk wire.StreamChunkParams
		m, err := fr.ReadChunkOrMessage(&chunk)
		if err != nil {
			c.fault(c.readError(err))
			return
		}
		if m == nil { // a chunk, decoded in place: its data is copied into its stream's buffers
			if !c.handshook.Load() {
				c.fault(fmt.Errorf("%w: notification %q sent before the handshake completed", ErrProtocol, wire.MethodStreamChunk))
				return
			}
			// Cut, not validated: Next validates it.
			if bad := c.chunk(&chunk, false); bad != nil {
				err = c.malformed(bad)
			} else {
				c.wellFormed()
			}
			if err != nil {
				c.fault(err)
				return
			}
			continue
		}
		if err := c.dispatch(m); err != nil {
			c.fault(err)
			return
		}
		if m.IsResponse() {
			// Let the caller just made runnable run on this thread now,
			// rather than wait for another thread to be woken for it
			// while this one blocks in read(2) again.
			runtime.Gosched()
		}
	}
}

// readError turns a failure to read stdout into the fault it stands for.
// The quote of a malformed line is redacted.
func (c *Client) readError(err error) error {
	var fe *wire.FrameError
	switch {
	case errors.As(err, &fe):
		return fmt.Errorf("%w: stdout %w", ErrProtocol, c.redact.frameError(fe))
	case errors.Is(err, io.EOF), errors.Is(err, os.ErrClosed):
		return errStdoutClosed
	}
	return fmt.Errorf("read stdout: %w", err)
}

// dispatch handles one message from the plugin. It returns a protocol
// violation, which stops the plugin: a message out of turn, or one
// malformed message too many (see malformed).
func (c *Client) dispatch(m *wire.Message) error {
	bad, err := c.handle(m)
	if err != nil || bad == nil {
		if err == nil {
			c.wellFormed()
		}
		return err
	}
	return c.malformed(bad)
}

// handle handles one message from the plugin. It returns the reason a
// message is malformed (it is then dropped), or a protocol violation.
func (c *Client) handle(m *wire.Message) (bad, violation error) {
	switch {
	case m.IsResponse():
		if err := c.checkInitAnswer(m); err != nil {
			return nil, err
		}
		return c.deliver(m), nil
	case !c.handshook.Load():
		what := "notification"
		if m.IsRequest() {
			what = "request"
		}
		return nil, fmt.Errorf("%w: %s %q sent before the handshake completed", ErrProtocol, what, c.redact(m.Method))
	case m.IsRequest() && m.Method == wire.MethodCapabilityCall && c.opts.OnCall != nil:
		c.serveCall(m)
	case m.IsRequest():
		c.reply(m.ID, &protocol.Error{Code: protocol.CodeMethodNotFound,
			Message: fmt.Sprintf("host method %q is not available", c.redact(m.Method))})
	case m.Method == wire.MethodLog:
		var p wire.LogParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return fmt.Errorf("%s params: %w", wire.MethodLog, c.redact.err(err)), nil
		}
		c.logNotification(p, len(m.Params))
	case m.Method == wire.MethodNotify:
		var p wire.NotifyParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return fmt.Errorf("%s params: %w", wire.MethodNotify, c.redact.err(err)), nil
		}
		if c.opts.OnNotify != nil {
			c.opts.OnNotify(c, c.redact(p.Event), p.Data)
		}
	case m.Method == wire.MethodCancel:
		var p wire.CancelParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return fmt.Errorf("%s params: %w", wire.MethodCancel, c.redact.err(err)), nil
		}
		c.pluginCancel(p.ID)
	case m.Method == wire.MethodStreamChunk:
		return c.streamChunk(m.Params), nil
	case m.Method == wire.MethodStreamAck:
		return c.streamAck(m.Params), nil
	case m.Method == wire.MethodProgress:
		return c.progress(m.Params), nil
	default:
		c.log.Debug("ignoring unknown notification", "method", c.opts.Redact(m.Method))
	}
	return nil, nil
}

// malformed counts one malformed message, which the host dropped, and
// logs why (rate-limited with the plugin's log lines). Each malformed
// message counts up and each well-formed one down (never below zero):
// when the count reaches the limit (Options.Limits.MalformedMessages),
// malformed returns the protocol violation that stops the plugin. A
// plugin that sends nothing but garbage is stopped after that many; one
// that mixes garbage with real traffic cannot get the host to log more
// than its rate allows. Only the reading goroutine calls it.
func (c *Client) malformed(why error) error {
	c.misbehaved++
	if c.misbehaved >= c.opts.maxMalformed {
		return fmt.Errorf("%w: %d malformed messages more than well-formed ones (limit %d), the last: %w",
			ErrProtocol, c.misbehaved, c.opts.maxMalformed, why)
	}
	c.warn("dropping a malformed message", "error", why)
	return nil
}

// wellFormed counts one well-formed message against the malformed ones.
func (c *Client) wellFormed() {
	if c.misbehaved > 0 {
		c.misbehaved--
	}
}

// warn logs a warning the plugin caused, under the rate limit of its log
// lines: a plugin cannot make the host log faster than it may log
// itself.
func (c *Client) warn(msg string, args ...any) {
	if c.limit.allow() {
		c.log.Warn(msg, args...)
	}
}

// deliver hands a response to its pending call. A response nobody waits
// for (a late answer to a cancelled call) is dropped. Any response counts
// as a sign of life for the hang timeout. It returns why a response with
// an id the host never sent is malformed.
func (c *Client) deliver(m *wire.Message) error {
	c.heard()
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil || id <= 0 || id > c.nextID.Load() {
		return fmt.Errorf("a response with id %s, which the host never sent", quoteID(c.opts.Redact(string(m.ID))))
	}
	if id == c.initID.Load() {
		c.takeFeatures(m.Result)
		c.handshook.Store(true)
	}
	c.mu.Lock()
	p, ok := c.mu.pending[id]
	delete(c.mu.pending, id)
	c.mu.Unlock()
	if !ok {
		c.log.Debug("dropping late response", "id", id)
		return nil
	}
	if p.async != nil {
		c.endChildren(id)
		p.async.answer(m)
		return nil
	}
	p.ch <- m
	c.endChildren(id)
	return nil
}

// reply answers the plugin's request id with the error e. A plugin that
// reads so little that even this small answer does not fit its queue is
// stopped as wedged.
func (c *Client) reply(id json.RawMessage, e *protocol.Error) {
	frame, err := encodeFrame(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: id, Error: e})
	if err != nil {
		return
	}
	if err := c.send(context.Background(), frameReply, 0, frame); errors.Is(err, errQueueFull) {
		c.fault(fmt.Errorf("%w: %v", ErrWedged, c.queueFull(len(frame))))
	}
}

// queueFull is the error of a frame of n bytes refused because the
// plugin's queue is past its hard bound.
func (c *Client) queueFull(n int) error {
	_, queued := c.out.over(time.Now())
	return fmt.Errorf("%w: %d bytes refused, %d bytes already queued for plugin %q, which reads its input too slowly (budget %d bytes)",
		errQueueFull, n, queued, c.Name(), c.opts.queueBytes)
}
