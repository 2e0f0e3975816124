package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// Drain bounds. After shutdown or end of input, in-flight handlers get
// drainWait to finish; then their contexts are cancelled and they get
// cancelWait more. Together they stay under wire.DefaultShutdownGrace,
// so a well-behaved plugin exits before the host sends SIGTERM.
const (
	drainWait  = 1000 * time.Millisecond
	cancelWait = 500 * time.Millisecond
)

// bounds are the timing bounds of a session: drainWait, cancelWait and
// inlineBound.
type bounds struct{ drain, cancel, inline time.Duration }

// sessionBounds are the bounds a session starts with; tests shorten them
// (withBounds, harness_test.go). Nothing else writes it.
var sessionBounds = bounds{drain: drainWait, cancel: cancelWait, inline: inlineBound}

var (
	// ErrNotServing is returned by Notify when no ServeIO is running, and
	// (wrapped) by Call when no ServeIO is running or when it stopped
	// reading the host's messages before the call's answer came.
	ErrNotServing = errors.New("sdk: plugin is not serving")
	// ErrHandshakeIncomplete is returned by Notify, and (wrapped) by
	// Call, before initialize has been answered: a plugin may send nothing
	// before the handshake completes.
	ErrHandshakeIncomplete = errors.New("sdk: handshake not complete")
	// ErrCallsUnsupported is returned (wrapped) by Call and CallStream
	// when the host does not serve capability/call (it does not support
	// FeatureCalls: a host before protocol 1.1, or one of 1.4 or later
	// that did not announce it), and by CallStream when it does not
	// support FeatureStreams: nothing is sent.
	ErrCallsUnsupported = errors.New("sdk: the host does not serve this capability/call")
	// ErrAlreadyServing is returned by ServeIO when another ServeIO on the
	// same Plugin is running.
	ErrAlreadyServing = errors.New("sdk: plugin is already serving")
	// ErrHandlersStuck is returned (wrapped) by ServeIO when handlers did
	// not return within the drain bound even after their contexts were
	// cancelled. Their goroutines are still running.
	ErrHandlersStuck = errors.New("handlers did not return after cancellation")
)

// Serve serves the protocol on os.Stdin and os.Stdout and exits the
// process: status 0 after shutdown or end of input, 1 on a protocol
// failure (the cause is logged). Before serving it points os.Stdout at
// os.Stderr, so stray fmt.Print output cannot corrupt the protocol stream.
//
// stdin and stdout are used in the mode the host created them (blocking
// pipes): the worker holding the read role blocks its thread in read(2)
// and is woken by the kernel, which costs less per request than the
// runtime poller's extra read and epoll_wait (see BENCHMARKS.md, sidecar).
func (p *Plugin) Serve() {
	out := os.Stdout
	os.Stdout = os.Stderr
	if err := p.ServeIO(context.Background(), os.Stdin, out); err != nil {
		p.Logger().Error("plugin stopped on a protocol failure", "error", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// ServeIO serves the protocol reading host messages from r and writing
// frames to w, which receives nothing else. It returns nil after a shutdown
// request or at the end of r, once in-flight handlers have finished
// (bounded, see the package doc). It returns ctx's error when ctx is done,
// a write error when w fails, and an error quoting the line number and
// first bytes of an oversized frame. When ctx is done or a write fails and
// r is an io.Closer, r is closed to end a blocked read. Every goroutine
// ServeIO started has ended when it returns, unless the error wraps
// ErrHandlersStuck.
func (p *Plugin) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	s, err := p.startSession(ctx, w)
	if err != nil {
		return err
	}
	defer p.endSession()
	stopCloser := closeOnDone(s.abort, r)
	defer stopCloser()

	s.fr = wire.NewFrameReader(r, 0)
	// The handshake is read and answered on this goroutine; the first
	// request for a handler starts the first worker. So a plugin answers
	// initialize without starting a goroutine (in a fresh process, a
	// thread), as the floor of BENCHMARKS.md's cold start does.
	c, loopErr := s.readUntilCall()
	if c != nil {
		loopErr = s.sched.serve(c)
	}
	close(s.readDone) // nothing more is read: calls in flight end
	drainErr := s.drain()
	s.sched.close(drainErr == nil) // idle workers, and any between a handler and idling
	s.cancelAbort(nil)
	return errors.Join(loopErr, drainErr)
}

// session is one ServeIO run.
//
// Lock order: Plugin.mu is never held while session.mu is taken, and
// neither is held across I/O or a handler call.
type session struct {
	p      *Plugin
	reg    registry
	onInit InitializeFunc
	log    *slog.Logger // SetLogger's when the session started; nil: the plugin's default (logAt)
	fw     *wire.FrameWriter
	initd  atomic.Bool // initialize answered
	// hostVersion is the host's protocol_version, written before initd is
	// set and never after; hostFeats the wire.Features it serves
	// (features.go), stored then too, and read by HostSupports at any
	// time.
	hostVersion string
	hostFeats   atomic.Uint32
	nextOut     atomic.Uint64 // the number of the plugin's last request
	readDone    chan struct{} // closed once the read loop ended
	// handshake orders the initialize answer before any notify: initialize
	// holds it to write the answer and set initd; notify holds it shared.
	handshake sync.RWMutex

	abort       context.Context // done on ctx done or write failure
	cancelAbort context.CancelCauseFunc
	handlers    context.Context // parent of every handler's context
	cancelAll   context.CancelFunc

	fr     *wire.FrameReader // read by the holder of the read role
	sched  *scheduler        // who reads, who runs each handler
	bounds bounds

	mu struct {
		sync.Mutex
		calls  map[string]*call              // in-flight requests by id
		out    map[string]chan *wire.Message // the plugin's own requests in flight, by id key
		active int                           // running handler goroutines
		idle   chan struct{}                 // closed when active drops to 0

		// The streams in flight (stream.go), by request id key: those the
		// plugin produces for host requests, and those it consumes for its
		// own calls. Created on first use.
		producing map[string]*producer
		consuming map[string]*consumer
	}
}

// call is one in-flight request.
type call struct {
	id       json.RawMessage
	key      string // idKey(id), its key in session.mu.calls
	method   string
	fn       callFunc
	ctx      handlerCtx // the handler's; passed as &c.ctx
	params   json.RawMessage
	cancel   context.CancelFunc
	answered atomic.Bool
}

// logAt returns the logger of a line at level: the session's, else the
// plugin's default, or nil when the default would drop the line and was
// not created yet (defaultLogger.forLevel).
func (s *session) logAt(level slog.Level) *slog.Logger {
	if s.log != nil {
		return s.log
	}
	return s.p.def.forLevel(s.p.name, level)
}

// logDebug logs a debug line (logAt).
func (s *session) logDebug(msg string, args ...any) {
	if l := s.logAt(slog.LevelDebug); l != nil {
		l.Debug(msg, args...)
	}
}

// logWarn logs a warning (logAt).
func (s *session) logWarn(msg string, args ...any) { s.logAt(slog.LevelWarn).Warn(msg, args...) }

// logError logs an error (logAt).
func (s *session) logError(msg string, args ...any) { s.logAt(slog.LevelError).Error(msg, args...) }

func (p *Plugin) startSession(ctx context.Context, w io.Writer) (*session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.serving != nil {
		return nil, ErrAlreadyServing
	}
	s := &session{p: p, reg: p.mu.reg.clone(), onInit: p.mu.onInit, log: p.mu.logger, fw: wire.NewFrameWriter(w)}
	s.abort, s.cancelAbort = context.WithCancelCause(ctx)
	s.handlers, s.cancelAll = context.WithCancel(s.abort)
	s.mu.calls = map[string]*call{}
	s.mu.out = map[string]chan *wire.Message{}
	s.readDone = make(chan struct{})
	s.bounds = sessionBounds
	s.sched = newScheduler(s.bounds.inline, s.readUntilCall, s.run)
	p.mu.serving = s
	return s, nil
}

func (p *Plugin) endSession() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.serving = nil
}

// closeOnDone closes r (if it is an io.Closer) when ctx is done, to end a
// read blocked in it. The returned func stops the watch and waits for a
// close in progress, so no goroutine outlives it.
func closeOnDone(ctx context.Context, r io.Reader) func() {
	c, ok := r.(io.Closer)
	if !ok {
		return func() {}
	}
	closed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(closed)
		_ = c.Close()
	})
	return func() {
		if !stop() {
			<-closed
		}
	}
}

// readUntilCall reads and handles messages until one registers a call,
// which it returns, or until the read loop ends: then it returns a nil
// call and nil after shutdown or at the end of input, or the abort's cause
// or a fatal read error.
func (s *session) readUntilCall() (*call, error) {
	for {
		c, end, err := s.readOne()
		if end {
			return nil, err
		}
		if c != nil {
			return c, nil
		}
	}
}

// readOne reads and handles one message. It returns the call the message
// registered, if any, or end set when the read loop ends, with
// readUntilCall's error.
func (s *session) readOne() (c *call, end bool, err error) {
	if s.abort.Err() != nil {
		return nil, true, context.Cause(s.abort)
	}
	line, err := s.fr.ReadFrame()
	if err != nil {
		if s.abort.Err() != nil {
			return nil, true, context.Cause(s.abort)
		}
		if errors.Is(err, io.EOF) {
			s.logDebug("end of input")
			return nil, true, nil
		}
		return nil, true, fmt.Errorf("read from host: %w", err)
	}
	m := new(wire.Message)
	if err := wire.DecodeMessage(line, m); err != nil {
		s.malformed(line, err)
		return nil, false, nil
	}
	c, shutdown := s.dispatch(m)
	return c, shutdown, nil
}

// malformed answers a line that is not a JSON-RPC message with an error
// response whose id is null (wire.CodeParseError when it is not even JSON), and
// keeps serving.
func (s *session) malformed(line []byte, err error) {
	const quoteLimit = 120
	q := line
	if len(q) > quoteLimit {
		q = q[:quoteLimit]
	}
	s.logWarn("malformed frame from host", "error", err, "line", string(q))
	code := wire.CodeInvalidRequest
	if !json.Valid(line) {
		code = wire.CodeParseError
	}
	s.write(wire.NewErrorResponse(wire.NullID, Errorf(code, "%v: %q", err, q)))
}

// drain waits for in-flight handlers: drainWait, then cancels them all and
// waits cancelWait more.
func (s *session) drain() error {
	if s.waitIdle(s.bounds.drain) {
		return nil
	}
	s.cancelStragglers()
	if s.waitIdle(s.bounds.cancel) {
		return nil
	}
	s.mu.Lock()
	n := s.mu.active
	s.mu.Unlock()
	return fmt.Errorf("sdk: %d %w", n, ErrHandlersStuck)
}

// cancelStragglers cancels every handler still running at the drain bound
// and answers its request with CodeRequestCancelled, as $/cancel would.
// The answers are claimed before the contexts are cancelled, so a
// handler's own return on cancellation never wins.
func (s *session) cancelStragglers() {
	s.mu.Lock()
	calls := make([]*call, 0, len(s.mu.calls))
	for _, c := range s.mu.calls {
		if c.answered.CompareAndSwap(false, true) {
			calls = append(calls, c)
		}
	}
	s.mu.Unlock()
	s.cancelAll()
	for _, c := range calls {
		s.replyError(c.id, Errorf(protocol.CodeRequestCancelled, "%s cancelled: the plugin is shutting down", c.method))
	}
}

// waitIdle reports whether no handler is running, waiting up to d.
func (s *session) waitIdle(d time.Duration) bool {
	s.mu.Lock()
	if s.mu.active == 0 {
		s.mu.Unlock()
		return true
	}
	if s.mu.idle == nil {
		s.mu.idle = make(chan struct{})
	}
	idle := s.mu.idle
	s.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
		return true
	case <-t.C:
		return false
	}
}

// notify sends a notify notification once the handshake is complete.
func (s *session) notify(params wire.NotifyParams) error {
	s.handshake.RLock()
	defer s.handshake.RUnlock()
	if !s.initd.Load() {
		return ErrHandshakeIncomplete
	}
	if s.abort.Err() != nil {
		return ErrNotServing
	}
	m, err := wire.NewNotification(wire.MethodNotify, params)
	if err != nil {
		return err
	}
	if err := s.fw.WriteMessage(m); err != nil {
		s.cancelAbort(fmt.Errorf("write to host: %w", err))
		return fmt.Errorf("notify %q: %w", params.Event, err)
	}
	return nil
}
