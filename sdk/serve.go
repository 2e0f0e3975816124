package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// Drain bounds. After shutdown or end of input, in-flight handlers get
// drainWait to finish; then their contexts are cancelled and they get
// cancelWait more. Together they stay under protocol.DefaultShutdownGrace,
// so a well-behaved plugin exits before the host sends SIGTERM.
const (
	drainWait  = 1000 * time.Millisecond
	cancelWait = 500 * time.Millisecond
)

var (
	// ErrNotServing is returned by Notify when no ServeIO is running.
	ErrNotServing = errors.New("sdk: plugin is not serving")
	// ErrHandshakeIncomplete is returned by Notify before initialize has
	// been answered: a plugin may send nothing before the handshake
	// completes.
	ErrHandshakeIncomplete = errors.New("sdk: handshake not complete")
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
// a write error when w fails, and an error wrapping a *protocol.FrameError
// (and protocol.ErrFrameTooLarge) for an oversized frame. When ctx is done or a write fails and r is an io.Closer, r is
// closed to end a blocked read. Every goroutine ServeIO started has ended
// when it returns, unless the error wraps ErrHandlersStuck.
func (p *Plugin) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	s, err := p.startSession(ctx, w)
	if err != nil {
		return err
	}
	defer p.endSession()
	stopCloser := closeOnDone(s.abort, r)
	defer stopCloser()

	s.fr = protocol.NewFrameReader(r, 0)
	// The handshake is read and answered on this goroutine; the first
	// request for a handler starts the first worker. So a plugin answers
	// initialize without starting a goroutine (in a fresh process, a
	// thread), as the floor of BENCHMARKS.md's cold start does.
	c, loopErr := s.readUntilCall()
	if c != nil {
		s.workers.Add(1)
		go s.serveLoop(c)
		loopErr = <-s.loopDone
	}
	drainErr := s.drain()
	if t := s.handoff.Load(); t != nil {
		t.Stop()
	}
	close(s.stop)
	if drainErr == nil {
		s.workers.Wait() // idle workers, and any between a handler and idling
	}
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
	log    hclog.Logger
	fw     *protocol.FrameWriter
	initd  atomic.Bool // initialize answered
	// handshake orders the initialize answer before any notify: initialize
	// holds it to write the answer and set initd; notify holds it shared.
	handshake sync.RWMutex

	abort       context.Context // done on ctx done or write failure
	cancelAbort context.CancelCauseFunc
	handlers    context.Context // parent of every handler's context
	cancelAll   context.CancelFunc

	// Workers read and run the requests, one at a time holding the read
	// role (see serveLoop). role is unbuffered: a send hands the role to an
	// idle worker, and succeeds only when one waits. The worker that ends
	// the read loop sends the loop's error on loopDone. stop ends the idle
	// workers when ServeIO returns.
	fr          *protocol.FrameReader // read by the holder of the read role
	role        chan struct{}
	loopDone    chan error
	stop        chan struct{}
	workers     sync.WaitGroup
	idleWorkers atomic.Int32

	// A handler runs holding the read role (see runHolding) as episode
	// number inline, 0 when none does; handoff is the timer that takes the
	// role from it after bound, and slow is set while handlers take longer
	// than that.
	inline  atomic.Uint64
	episode atomic.Uint64
	slow    atomic.Bool
	handoff atomic.Pointer[time.Timer] // created by the first request
	bound   time.Duration

	mu struct {
		sync.Mutex
		calls  map[string]*call // in-flight requests by id
		active int              // running handler goroutines
		idle   chan struct{}    // closed when active drops to 0
	}
}

// call is one in-flight request.
type call struct {
	id       json.RawMessage
	key      string // idKey(id), its key in session.mu.calls
	method   string
	fn       callFunc
	ctx      context.Context
	params   json.RawMessage
	cancel   context.CancelFunc
	answered atomic.Bool
}

func (p *Plugin) startSession(ctx context.Context, w io.Writer) (*session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.serving != nil {
		return nil, ErrAlreadyServing
	}
	s := &session{p: p, reg: p.mu.reg.clone(), onInit: p.mu.onInit, log: p.mu.logger, fw: protocol.NewFrameWriter(w)}
	s.abort, s.cancelAbort = context.WithCancelCause(ctx)
	s.handlers, s.cancelAll = context.WithCancel(s.abort)
	s.mu.calls = map[string]*call{}
	s.role = make(chan struct{})
	s.loopDone = make(chan error, 1)
	s.stop = make(chan struct{})
	s.bound = inlineBound
	if p.inlineBound > 0 {
		s.bound = p.inlineBound
	}
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

// serveLoop is a worker's life: holding the read role, it reads and
// handles messages until one is a request for a handler (ping, $/cancel,
// initialize and shutdown are answered at once, in order), and runs that
// handler itself, still holding the role, so a quick handler costs no
// goroutine switch: the same thread reads, runs and answers, then reads on.
// A handler that runs past inlineBound loses the role: a timer hands it to
// an idle worker (or a new one), which reads on while the handler runs,
// and after such a hand-off (or after any handler that took inlineBound or
// longer) the next requests hand the role over at once, before their
// handler runs, until a handler returns within the bound again. A worker
// that lost the role waits idle for it again after its handler, unless
// maxIdleWorkers others already wait. The worker that ends the read loop
// (shutdown, end of input, abort or a read error) sends its result on
// loopDone and keeps the role. A worker given a call c starts by running
// it, holding the role.
func (s *session) serveLoop(c *call) {
	defer s.workers.Done()
	for {
		if c == nil {
			var err error
			if c, err = s.readUntilCall(); c == nil {
				s.loopDone <- err
				return
			}
		}
		held := s.runHolding(c)
		c = nil
		if held {
			continue // still the reader
		}
		if !s.takeIdleSlot() {
			return
		}
		select {
		case <-s.role:
			s.idleWorkers.Add(-1)
		case <-s.stop:
			return
		}
	}
}

// inlineBound is how long a handler runs holding the read role before the
// role moves to another worker: the longest a request (ping and $/cancel
// included) waits to be read behind a running handler, give or take the
// runtime's timer resolution (about a millisecond under load).
const inlineBound = 200 * time.Microsecond

// runHolding runs c, which the caller read holding the read role, and
// reports whether the caller still holds the role: unless handlers have
// been slow lately, c runs first with the role kept, and the hand-off
// timer takes it if c runs past inlineBound.
func (s *session) runHolding(c *call) bool {
	if s.slow.Load() {
		s.passRole()
		s.run(c)
		return false
	}
	ep := s.episode.Add(1)
	s.inline.Store(ep)
	t := s.handoff.Load()
	if t == nil {
		// Created here rather than at the start of the session: the first
		// timer starts the runtime's poller, which a plugin's start-up
		// need not wait for.
		t = time.AfterFunc(s.bound, s.handoffFired)
		s.handoff.Store(t)
	} else {
		t.Reset(s.bound)
	}
	s.run(c)
	if !s.inline.CompareAndSwap(ep, 0) {
		return false // the timer handed the role over
	}
	t.Stop()
	return true
}

// handoffFired runs on the hand-off timer: if a handler still runs
// holding the read role, the role moves on and later requests are handed
// over at once.
func (s *session) handoffFired() {
	ep := s.inline.Load()
	if ep == 0 || !s.inline.CompareAndSwap(ep, 0) {
		return // the handler returned first
	}
	s.slow.Store(true)
	s.passRole()
}

// passRole hands the read role to an idle worker, or to a new one when
// none waits.
func (s *session) passRole() {
	select {
	case s.role <- struct{}{}:
	default:
		s.workers.Add(1)
		go s.serveLoop(nil)
	}
}

// maxIdleWorkers bounds the workers kept waiting for the read role. A
// worker keeps the stack its handlers grew, so reusing one saves the stack
// growth and the goroutine start of a new one.
const maxIdleWorkers = 16

// takeIdleSlot reserves one of the maxIdleWorkers idle places.
func (s *session) takeIdleSlot() bool {
	for {
		n := s.idleWorkers.Load()
		if n >= maxIdleWorkers {
			return false
		}
		if s.idleWorkers.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// readUntilCall reads and handles messages until one registers a call,
// which it returns, or until the read loop ends: then it returns a nil
// call and nil after shutdown or at the end of input, or the abort's cause
// or a fatal read error.
func (s *session) readUntilCall() (*call, error) {
	for {
		if s.abort.Err() != nil {
			return nil, context.Cause(s.abort)
		}
		line, err := s.fr.ReadFrame()
		if err != nil {
			if s.abort.Err() != nil {
				return nil, context.Cause(s.abort)
			}
			if errors.Is(err, io.EOF) {
				s.log.Debug("end of input")
				return nil, nil
			}
			return nil, fmt.Errorf("read from host: %w", err)
		}
		m := new(protocol.Message)
		if err := protocol.DecodeMessage(line, m); err != nil {
			s.malformed(line, err)
			continue
		}
		c, shutdown := s.dispatch(m)
		if shutdown {
			return nil, nil
		}
		if c != nil {
			return c, nil
		}
	}
}

// malformed answers a line that is not a JSON-RPC message with an error
// response whose id is null (CodeParseError when it is not even JSON), and
// keeps serving.
func (s *session) malformed(line []byte, err error) {
	const quoteLimit = 120
	q := line
	if len(q) > quoteLimit {
		q = q[:quoteLimit]
	}
	s.log.Warn("malformed frame from host", "error", err, "line", string(q))
	code := protocol.CodeInvalidRequest
	if !json.Valid(line) {
		code = protocol.CodeParseError
	}
	s.write(protocol.NewErrorResponse(protocol.NullID, protocol.Errorf(code, "%v: %q", err, q)))
}

// drain waits for in-flight handlers: drainWait, then cancels them all and
// waits cancelWait more.
func (s *session) drain() error {
	dw, cw := drainWait, cancelWait
	if s.p.drainWait > 0 {
		dw, cw = s.p.drainWait, s.p.cancelWait
	}
	if s.waitIdle(dw) {
		return nil
	}
	s.cancelStragglers()
	if s.waitIdle(cw) {
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
		s.replyError(c.id, protocol.Errorf(protocol.CodeRequestCancelled, "%s cancelled: the plugin is shutting down", c.method))
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

// write sends m; a failure aborts the session (the host is gone).
func (s *session) write(m *protocol.Message) {
	if err := s.fw.WriteMessage(m); err != nil {
		s.cancelAbort(fmt.Errorf("write to host: %w", err))
	}
}

// reply answers request id with result: a *resultJSON or an encoded value
// is sent as is, anything else is marshalled (an internal error answers
// when it cannot be). The frame is assembled in a pooled buffer, with no
// second encoding of the result.
func (s *session) reply(id json.RawMessage, result any) {
	var raw []byte
	switch r := result.(type) {
	case *resultJSON:
		raw = r.buf.Bytes()
		defer r.free()
	case encoded:
		raw = r
	default:
		b, err := json.Marshal(result)
		if err != nil {
			s.replyError(id, protocol.Errorf(protocol.CodeInternalError, "marshal result: %v", err))
			return
		}
		raw = b
	}
	fb := frameBufs.Get().(*[]byte)
	*fb = wire.AppendResult((*fb)[:0], id, raw)
	if err := s.fw.WriteFrame(*fb); err != nil {
		s.cancelAbort(fmt.Errorf("write to host: %w", err))
	}
	if cap(*fb) <= maxPooledBuf {
		frameBufs.Put(fb)
	}
}

// encoded is a result already marshalled (compact JSON, no newline).
type encoded []byte

// emptyObject is the {} result of ping, shutdown and a nil output.
var emptyObject any = encoded("{}")

// maxPooledBuf bounds the capacity of a buffer returned to a pool, so one
// large answer does not stay allocated.
const maxPooledBuf = 64 << 10

// frameBufs pools the buffers response frames are assembled in.
var frameBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// resultJSON is a result marshalled into a pooled buffer by output.
type resultJSON struct{ buf bytes.Buffer }

var resultBufs = sync.Pool{New: func() any { return new(resultJSON) }}

func newResultJSON() *resultJSON {
	r := resultBufs.Get().(*resultJSON)
	r.buf.Reset()
	return r
}

// free returns r to its pool; r must not be used after.
func (r *resultJSON) free() {
	if r.buf.Cap() <= maxPooledBuf {
		resultBufs.Put(r)
	}
}

// replyError answers request id with e.
func (s *session) replyError(id json.RawMessage, e *protocol.Error) {
	s.write(protocol.NewErrorResponse(id, e))
}

// notify sends a notify notification once the handshake is complete.
func (s *session) notify(params protocol.NotifyParams) error {
	s.handshake.RLock()
	defer s.handshake.RUnlock()
	if !s.initd.Load() {
		return ErrHandshakeIncomplete
	}
	if s.abort.Err() != nil {
		return ErrNotServing
	}
	m, err := protocol.NewNotification(protocol.MethodNotify, params)
	if err != nil {
		return err
	}
	if err := s.fw.WriteMessage(m); err != nil {
		s.cancelAbort(fmt.Errorf("write to host: %w", err))
		return fmt.Errorf("notify %q: %w", params.Event, err)
	}
	return nil
}
