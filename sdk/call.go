package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/extkernel/extkernel/internal/jsonscan"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// Call calls method of capability through the host (capability/call,
// protocol 1.1) and returns the callee's output, nil when it returned
// none. The plugin's manifest must require the capability; the host routes
// the call to the provider its capability closure chose. input is
// marshalled to JSON (a json.RawMessage is validated and compacted); nil
// sends none.
//
// When ctx is a handler's context, or derives from one, the call names
// that handler's request as its parent: the host then bounds it by the
// request's deadline, cancels it with the request and counts its depth
// from it. With any other context the call is independent.
//
// While Call waits, the plugin keeps reading and serving host requests,
// those the call itself causes included (A → B → A): a handler that holds
// the read role reads on its own goroutine until the answer comes, and
// moves reading to another worker if a request for a handler comes first
// (see the package doc, # Concurrency).
//
// Call returns:
//   - an error wrapping ErrNotServing when no ServeIO runs or it has
//     stopped reading (after shutdown or the end of input), and when it
//     stops before the host answers;
//   - an error wrapping ErrHandshakeIncomplete before initialize has been
//     answered, and one wrapping ErrCallsUnsupported when the host does
//     not support FeatureCalls (a host of protocol 1.0);
//   - an error wrapping ctx.Err() when ctx is done first; Call then sends
//     $/cancel for the call (to a host that supports FeatureCancel) and
//     drops its answer (a call reading its own answer returns once the
//     host answered the $/cancel, at once, or the call);
//   - the *protocol.Error the host answered with, not wrapped: one of
//     CodeNotAuthorized, CodeNotAvailable, CodeMethodNotFound,
//     CodeRequestCancelled, -32007 (call depth exceeded), -32008 (stale
//     generation), or the callee's own error;
//   - an error when input cannot be marshalled, the request cannot be
//     written, or the result is not an object.
//
// Nothing is sent when Call fails before the request is written: without
// a ServeIO, before the handshake, with a 1.0 host, with ctx already done,
// or with an input it cannot marshal. Call is safe for concurrent use.
func (p *Plugin) Call(ctx context.Context, capability, method string, input any) (json.RawMessage, error) {
	name := capability + "." + method
	p.mu.Lock()
	s := p.mu.serving
	p.mu.Unlock()
	if s == nil {
		return nil, fmt.Errorf("call %q: %w", name, ErrNotServing)
	}
	params := wire.CapabilityCallParams{Capability: capability, Method: method}
	if input != nil {
		raw, err := marshalInput(input)
		if err != nil {
			return nil, fmt.Errorf("call %q: marshal input: %w", name, err)
		}
		params.Input = raw
	}
	out, err := s.call(ctx, params)
	if pe, ok := err.(*protocol.Error); ok {
		return nil, pe // the host's answer, as is
	}
	if err != nil {
		return nil, fmt.Errorf("call %q: %w", name, err)
	}
	return out, nil
}

// marshalInput returns input as compact JSON: a json.RawMessage is
// validated and compacted in one pass (an empty one is null, as
// json.Marshal has it), anything else marshalled.
func marshalInput(input any) (json.RawMessage, error) {
	raw, ok := input.(json.RawMessage)
	switch {
	case !ok:
		return json.Marshal(input)
	case len(raw) == 0:
		return json.RawMessage("null"), nil
	}
	return jsonscan.AppendCompact(make([]byte, 0, len(raw)), raw)
}

// parentKey is the context key under which a handler's context answers
// with itself (a *handlerCtx), naming the request it serves.
type parentKey struct{}

// handlerCtx is a handler's context: its request's context, which also
// answers parentKey, so that Call finds the request to name as parent in
// it or in any context derived from it. It lives in the call and is passed
// by address, so the request path allocates nothing for it.
type handlerCtx struct {
	context.Context
	s           *session
	id          json.RawMessage // the request's id
	traceparent string          // the request's, if the host sent a valid one
	// episode is the scheduler's number for the handler's run holding the
	// read role, 0 when it runs without it; set before the handler starts.
	episode uint64
	// run measures the handler's stretches of running between the waits
	// of its calls, the time scheduler.observe judges.
	run stretches
	// answered is the request's call.answered: once set, no call names
	// the request as parent (writeCall).
	answered *atomic.Bool
}

// Value answers parentKey with h, traceparentKey with the request's
// traceparent (when it has one), and any other key as h's request context.
func (h *handlerCtx) Value(key any) any {
	switch key {
	case parentKey{}:
		return h
	case traceparentKey{}:
		if h.traceparent != "" {
			return h.traceparent
		}
	}
	return h.Context.Value(key)
}

// errParentAnswered is writeCall's error for a call whose parent request
// was answered (cancelled, most often) before the call could be written.
var errParentAnswered = fmt.Errorf("its parent request was answered: %w", context.Canceled)

// writeCall writes the capability/call request id with params, its frame
// appended in a pooled buffer (wire.AppendCapabilityCall). A failed write
// aborts the session (the host is gone) and is returned wrapped. A call
// made in parent's handler is not written once parent's request was
// answered: the check and the write hold the writer, and the answer is
// claimed before it is written (cancelCall, finish), so the host never
// reads a call naming a parent it no longer has in flight (§5.11).
func (s *session) writeCall(id json.RawMessage, params *wire.CapabilityCallParams, parent *handlerCtx) error {
	fb := frameBufs.Get().(*[]byte)
	*fb = append(wire.AppendCapabilityCall((*fb)[:0], id, params), '\n')
	if beforeCallWrite != nil {
		beforeCallWrite()
	}
	stop := func() bool { return parent != nil && parent.answered.Load() }
	written, err := s.fw.WriteLineUnless(stop, *fb)
	if cap(*fb) <= maxPooledBuf {
		frameBufs.Put(fb)
	}
	if err != nil {
		err = fmt.Errorf("write to host: %w", err)
		s.cancelAbort(err)
	} else if !written {
		err = errParentAnswered
	}
	return err
}

// handlerOf returns the context of the handler of s that ctx is or
// derives from, or nil.
func (s *session) handlerOf(ctx context.Context) *handlerCtx {
	if h, ok := ctx.Value(parentKey{}).(*handlerCtx); ok && h.s == s {
		return h
	}
	return nil
}

// stretches measures how long a handler runs without waiting for a call:
// the longest of its stretches, each from its start or a call's answer to
// the next call or its return. A handler that calls often lets the host's
// messages be read often, however long it runs in all. Its methods are
// safe for concurrent use (a handler's goroutines may call at once; the
// measure is then approximate).
type stretches struct {
	mark    atomic.Int64 // when the current stretch began, ns on clock
	longest atomic.Int64 // ns
}

// clock is the origin of stretches' times: time.Since(clock) is
// monotonic.
var clock = time.Now()

// start begins the first stretch.
func (st *stretches) start() { st.mark.Store(int64(time.Since(clock))) }

// pause ends a stretch: a call begins to wait.
func (st *stretches) pause() { st.record(int64(time.Since(clock)) - st.mark.Load()) }

// resume begins a stretch: a call returned.
func (st *stretches) resume() { st.mark.Store(int64(time.Since(clock))) }

// end ends the last stretch and returns the longest.
func (st *stretches) end() time.Duration {
	st.pause()
	return time.Duration(st.longest.Load())
}

func (st *stretches) record(d int64) {
	for {
		l := st.longest.Load()
		if d <= l || st.longest.CompareAndSwap(l, d) {
			return
		}
	}
}

// beforeCallWrite, when set (tests), runs in writeCall before the call is
// written.
var beforeCallWrite func()

// parentOf returns the id of the request of s whose handler's context ctx
// is or derives from, or nil.
func (s *session) parentOf(ctx context.Context) json.RawMessage {
	if h := s.handlerOf(ctx); h != nil {
		return h.id
	}
	return nil
}

// call sends capability/call with params (and ctx's parent) and waits for
// its answer, ctx, or the end of reading. A caller whose handler holds the
// read role reads the answer itself (readFor); any other hands a handler's
// role over before it writes, so the answer is read.
func (s *session) call(ctx context.Context, params wire.CapabilityCallParams) (json.RawMessage, error) {
	if err := s.callable(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h := s.handlerOf(ctx)
	if h != nil {
		params.Parent = h.id
		h.run.pause()
		defer h.run.resume()
	}
	params.Traceparent = s.traceparent(ctx)
	id, key, answer := s.startCall()
	reads := h != nil && s.sched.claimRead(h.episode)
	if !reads {
		s.sched.release()
	}
	if err := s.writeCall(id, &params, h); err != nil {
		if reads {
			s.sched.keepRead(h.episode)
		}
		s.forget(key)
		return nil, err
	}
	if reads {
		if m := s.readFor(ctx, h, id, answer); m != nil {
			return answerOutput(ctx, m)
		}
	}
	cancelled := false
	select {
	case m := <-answer:
		return callOutput(m)
	case <-ctx.Done():
		cancelled = true
	case <-s.readDone:
	case <-s.abort.Done():
	}
	if !s.forget(key) {
		return callOutput(<-answer) // answered meanwhile: sent at once
	}
	if !cancelled {
		return nil, fmt.Errorf("serving ended before the host answered: %w", ErrNotServing)
	}
	s.cancelOut(id)
	return nil, ctx.Err()
}

// readFor reads and handles the host's messages on the caller's
// goroutine, the handler h holding the read role (claimRead), until the
// answer to the call id comes on answer, which it returns with the role
// kept (keepRead), unless another call or a stream waits for the host:
// then reading moves on to another worker (release). It returns nil when
// it read a request for a handler first, handing the role over with it
// (handOver), or when the read loop ended (endRead): the caller then
// waits for the answer as any other. When
// ctx is done meanwhile, $/cancel is sent for the call, which the host
// answers at once with -32800 (docs/protocol.md §5.8).
func (s *session) readFor(ctx context.Context, h *handlerCtx, id json.RawMessage, answer chan *wire.Message) *wire.Message {
	stop := context.AfterFunc(ctx, func() { s.cancelOut(id) })
	defer stop()
	for {
		c, end, err := s.readOne()
		switch {
		case end:
			s.sched.endRead(err)
			return nil
		case c != nil:
			s.sched.handOver(c)
			return nil
		}
		select {
		case m := <-answer:
			s.sched.keepRead(h.episode)
			if s.waiting() {
				// Another call (a goroutine of this handler, or any) or a
				// stream waits for the host: reading moves on rather than
				// wait for the handler to call again or for the timer.
				s.sched.release()
			}
			return m
		default:
		}
	}
}

// waiting reports whether a call of the plugin waits for its answer, or
// a stream for the host's acks or chunks.
func (s *session) waiting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.out) > 0 || len(s.mu.producing) > 0 || len(s.mu.consuming) > 0
}

// answerOutput is callOutput for an answer readFor read: a call whose ctx
// ended and which the host answered cancelled (after the $/cancel readFor
// sent) returns ctx's error, as a call waiting on ctx does.
func answerOutput(ctx context.Context, m *wire.Message) (json.RawMessage, error) {
	if m.Error != nil && m.Error.Code == protocol.CodeRequestCancelled && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return callOutput(m)
}

// callable returns why the session cannot call the host now, or nil. As
// notify, it waits for an initialize answer being written, so a call made
// once the host has the answer never finds the handshake incomplete.
func (s *session) callable() error {
	s.handshake.RLock()
	initd := s.initd.Load()
	s.handshake.RUnlock()
	if !initd {
		return ErrHandshakeIncomplete
	}
	if !s.host().Has(wire.HasCalls) {
		return fmt.Errorf("host speaks protocol %s without the %q feature: %w", s.hostVersion, wire.FeatureCalls, ErrCallsUnsupported)
	}
	select {
	case <-s.readDone:
		return ErrNotServing
	default:
	}
	if s.abort.Err() != nil {
		return ErrNotServing
	}
	return nil
}

// startCall registers a new request of the plugin and returns its id
// ("c1", "c2", ...), the id's key and the channel its answer is sent on.
func (s *session) startCall() (id json.RawMessage, key string, answer chan *wire.Message) {
	n := s.nextOut.Add(1)
	id = strconv.AppendUint(append(make(json.RawMessage, 0, 24), `"c`...), n, 10)
	id = append(id, '"')
	key = idKey(id)
	answer = make(chan *wire.Message, 1)
	s.mu.Lock()
	s.mu.out[key] = answer
	s.mu.Unlock()
	return id, key, answer
}

// forget unregisters the plugin's request key and reports whether it was
// still waiting: false means its answer was taken and is being sent.
func (s *session) forget(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.mu.out[key]
	delete(s.mu.out, key)
	return ok
}

// answered routes the host's response m to the plugin's request it
// answers. A response to no request in flight (a late answer to a call
// given up, or a stray id) is dropped.
func (s *session) answered(m *wire.Message) {
	key := idKey(m.ID)
	s.mu.Lock()
	answer, ok := s.mu.out[key]
	delete(s.mu.out, key)
	s.mu.Unlock()
	if !ok {
		s.logDebug("ignoring response to an unknown request", "id", string(m.ID))
		return
	}
	answer <- m // buffered, and the only send
}

// cancelOut sends $/cancel for the plugin's request id, to a host that
// supports FeatureCancel (to another, nothing: its answer, when it
// comes, is dropped).
func (s *session) cancelOut(id json.RawMessage) {
	if !s.host().Has(wire.HasCancel) {
		return
	}
	m, err := wire.NewNotification(wire.MethodCancel, wire.CancelParams{ID: id})
	if err == nil {
		s.write(m)
	}
}

// callOutput returns the output of the host's answer m to a call, or its
// *protocol.Error.
func callOutput(m *wire.Message) (json.RawMessage, error) {
	if m.Error != nil {
		return nil, m.Error
	}
	if len(m.Result) == 0 {
		return nil, nil
	}
	var res wire.OutputResult
	if err := wire.Decode(m.Result, &res); err != nil {
		return nil, fmt.Errorf("malformed result %.120s: %w", m.Result, err)
	}
	return res.Output, nil
}
