package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// callFunc runs one host request in its own goroutine and returns its
// result, to be marshalled as the response.
type callFunc func(s *session, ctx context.Context, params json.RawMessage) (any, error)

// routes maps the concurrent host-to-plugin methods to their implementation.
// initialize, ping, shutdown and $/cancel are answered by the read loop.
var routes = map[string]callFunc{
	wire.MethodIntercept:      (*session).intercept,
	wire.MethodStrategyInvoke: (*session).strategy,
	wire.MethodProviderInvoke: (*session).provider,
	wire.MethodActionRun:      (*session).action,
	// protocol 1.1
	wire.MethodContributionInvoke: (*session).contribution,
}

// dispatch handles one message from the read loop. It returns the call a
// request for a handler registered (to be run by the caller, see
// scheduler), and reports whether the message was a shutdown request, after
// which nothing more is read.
func (s *session) dispatch(m *wire.Message) (c *call, shutdown bool) {
	switch {
	case m.IsResponse():
		s.answered(m)
		return nil, false
	case m.IsNotification():
		s.notification(m)
		return nil, false
	}
	if m.Method == wire.MethodInitialize {
		s.initialize(m)
		return nil, false
	}
	if !s.initd.Load() {
		s.replyError(m.ID, Errorf(wire.CodeNotInitialized, "%s before initialize", m.Method))
		return nil, false
	}
	switch m.Method {
	case wire.MethodPing:
		s.reply(m.ID, emptyObject)
	case wire.MethodShutdown:
		s.logDebug("shutdown requested")
		s.reply(m.ID, emptyObject)
		return nil, true
	default:
		fn, ok := routes[m.Method]
		if !ok {
			s.replyError(m.ID, Errorf(protocol.CodeMethodNotFound, "method %q not found", m.Method))
			return nil, false
		}
		return s.register(m, fn), false
	}
	return nil, false
}

// notification handles a host notification: $/cancel, and the stream
// notifications (stream.go); others are ignored, as JSON-RPC prescribes.
func (s *session) notification(m *wire.Message) {
	switch m.Method {
	case wire.MethodCancel:
	case wire.MethodStreamAck:
		s.streamAck(m.Params)
		return
	case wire.MethodStreamChunk:
		s.streamChunk(m.Params)
		return
	default:
		s.logDebug("ignoring notification", "method", m.Method)
		return
	}
	var p wire.CancelParams
	if err := wire.Decode(m.Params, &p); err != nil || len(p.ID) == 0 {
		s.logWarn("ignoring malformed $/cancel", "params", string(m.Params))
		return
	}
	s.mu.Lock()
	c := s.mu.calls[idKey(p.ID)]
	s.mu.Unlock()
	if c == nil {
		return // already answered: nothing to cancel
	}
	s.cancelCall(c, Errorf(protocol.CodeRequestCancelled, "%s cancelled by the host", c.method))
}

// initialize answers the handshake, synchronously so that the next frame
// already sees its outcome.
func (s *session) initialize(m *wire.Message) {
	if s.initd.Load() {
		s.replyError(m.ID, Errorf(wire.CodeInvalidRequest, "initialize: already initialized"))
		return
	}
	var params protocol.InitializeParams
	if err := decodeParams(m.Params, &params); err != nil {
		s.replyError(m.ID, err)
		return
	}
	if err := checkVersion(params.ProtocolVersion); err != nil {
		s.replyError(m.ID, err)
		return
	}
	s.hostVersion = params.ProtocolVersion
	s.hostFeats.Store(uint32(hostFeatures(params)))
	if !s.host().Has(wire.HasContributions) {
		// A 1.0 host knows no contributions of host kinds: declare none.
		s.reg.decls.Contributions = nil
	}
	if s.onInit != nil {
		_, err := s.invoke(wire.MethodInitialize, func() (any, error) {
			return nil, s.onInit(s.handlers, params)
		})
		if err != nil {
			s.replyError(m.ID, wireError(err))
			return
		}
	}
	s.handshake.Lock()
	s.reply(m.ID, s.reg.result(s.p.name, s.p.version))
	s.initd.Store(true)
	s.handshake.Unlock()
	s.logDebug("initialized", "host", params.Host.Name, "host_version", params.Host.Version)
}

// protocolVersion is the protocol version the SDK implements and answers
// initialize with: 1.1 adds capability/call, 1.2 a stream's window_bytes,
// which its producers honour, 1.3 $/progress (Progress), 1.4 features
// (HostSupports). Any host of the same major accepts it (docs/protocol.md
// §8).
const protocolVersion = "1.4.0"

// checkVersion refuses a host whose protocol major version differs from
// protocolVersion's, saying which side to upgrade.
func checkVersion(host string) *protocol.Error {
	hm, err := major(host)
	if err != nil {
		return Errorf(protocol.CodeInvalidParams, "initialize: protocol_version: %v", err)
	}
	pm, _ := major(protocolVersion)
	switch {
	case hm > pm:
		return Errorf(wire.CodeUnsupportedVersion,
			"host speaks protocol %s, this plugin speaks %s: upgrade the plugin (its extkernel SDK)", host, protocolVersion)
	case hm < pm:
		return Errorf(wire.CodeUnsupportedVersion,
			"host speaks protocol %s, this plugin speaks %s: upgrade the host", host, protocolVersion)
	}
	return nil
}

// major returns the major number of a semantic version ("1.2.3", "v1.2").
func major(v string) (int, error) {
	s := strings.TrimPrefix(v, "v")
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = s[:i]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a semantic version", v)
	}
	return n, nil
}

// register records request m, to be run by fn, as in flight and returns
// its call, or answers it and returns nil when its id is already in flight.
func (s *session) register(m *wire.Message, fn callFunc) *call {
	key := idKey(m.ID)
	ctx, cancel := context.WithCancel(s.handlers)
	c := &call{id: m.ID, method: m.Method, cancel: cancel, key: key, fn: fn, params: m.Params}
	c.ctx = handlerCtx{Context: ctx, s: s, id: m.ID, answered: &c.answered}
	s.mu.Lock()
	if _, dup := s.mu.calls[key]; dup {
		s.mu.Unlock()
		cancel()
		s.replyError(m.ID, Errorf(wire.CodeInvalidRequest, "%s: request id %s is already in flight", m.Method, m.ID))
		return nil
	}
	s.mu.calls[key] = c
	s.mu.active++
	s.mu.Unlock()
	return c
}

// run calls c's handler, answers c and forgets it. Whether the handler
// ran the inline bound or longer without waiting for a call (see
// stretches) is recorded before the answer is
// written, so the next request the host sends already sees it (see
// scheduler.observe).
func (s *session) run(c *call) {
	defer s.finish(c)
	c.ctx.run.start()
	res, err := s.invokeCall(c)
	s.sched.observe(c.ctx.episode, c.ctx.run.end())
	s.answer(c, res, err)
}

// invokeCall runs c's handler; a panic is turned into wire.CodeInternalError
// so the plugin keeps running.
func (s *session) invokeCall(c *call) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = s.recovered(c.method, r)
		}
	}()
	return c.fn(s, &c.ctx, c.params)
}

// finish forgets a call whose handler returned.
func (s *session) finish(c *call) {
	c.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.calls[c.key] == c {
		delete(s.mu.calls, c.key)
	}
	s.mu.active--
	if s.mu.active == 0 && s.mu.idle != nil {
		close(s.mu.idle)
		s.mu.idle = nil
	}
}

// answer writes the response to c once: the first of the handler's return
// and a cancellation wins.
func (s *session) answer(c *call, res any, err error) {
	if !c.answered.CompareAndSwap(false, true) {
		if r, ok := res.(*resultJSON); ok {
			r.free()
		}
		return
	}
	if err != nil {
		s.replyError(c.id, wireError(err))
		return
	}
	s.reply(c.id, res)
}

// cancelCall cancels c's context and answers it with e, unless its
// handler answered first. The answer is claimed before the context is
// cancelled, so the handler's own return on cancellation never wins.
func (s *session) cancelCall(c *call, e *protocol.Error) {
	if !c.answered.CompareAndSwap(false, true) {
		return
	}
	c.cancel()
	s.replyError(c.id, e)
}

// invoke runs fn, turning a panic into wire.CodeInternalError so the plugin
// keeps running.
func (s *session) invoke(method string, fn func() (any, error)) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = s.recovered(method, r)
		}
	}()
	return fn()
}

// recovered logs a handler's panic r and returns the error it answers.
func (s *session) recovered(method string, r any) (any, error) {
	s.logError("handler panicked", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	return nil, Errorf(wire.CodeInternalError, "%s handler panicked: %v", method, r)
}

// wireError maps a handler error to the error sent: a *protocol.Error keeps
// its code, anything else is CodePluginError.
func wireError(err error) *protocol.Error {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe != nil {
		return pe
	}
	return &protocol.Error{Code: protocol.CodePluginError, Message: err.Error()}
}

// idKey is the map key of a request id: its JSON text without surrounding
// space, so 7 and "7" are different ids, as in JSON-RPC.
func idKey(id json.RawMessage) string { return string(bytes.TrimSpace(id)) }

// decodeParams decodes raw into v, mapping failure to CodeInvalidParams.
func decodeParams(raw json.RawMessage, v any) *protocol.Error {
	if len(raw) == 0 {
		return Errorf(protocol.CodeInvalidParams, "missing params")
	}
	if err := wire.Decode(raw, v); err != nil {
		return Errorf(protocol.CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}
