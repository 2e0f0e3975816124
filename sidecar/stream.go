package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
)

// ErrFlowControl is wrapped by the error a Stream ends with when the
// plugin broke its flow control (docs/protocol.md §5.12): a chunk beyond
// the window, or one out of sequence. The host drops the chunk, cancels
// the request with $/cancel and keeps the plugin running: the violation
// costs the plugin that request, never the host's memory.
var ErrFlowControl = errors.New("stream flow control violated")

// streamPipeSize is the room OpenStream asks for in the plugin's stdout
// pipe, once per client (process.GrowStdout; Linux only): with the
// default 64 KiB a plugin writing chunks of 64 KiB waits for the host to
// read each one before it can write the next. 1 MiB is the most an
// unprivileged process may ask for by default; only a plugin that streams
// is given it.
const streamPipeSize = 1 << 20

// errStreamClosed ends a Stream its consumer closed before its end.
var errStreamClosed = errors.New("stream closed by the host")

// StreamOptions configure OpenStream. The zero value asks for the default
// window and acknowledges chunks as Next takes them.
type StreamOptions struct {
	// Window is how many chunks the plugin may send beyond the last one
	// acknowledged: zero or less means wire.DefaultStreamWindow, more than
	// wire.MaxStreamWindow is capped to it. It is also the most chunks the
	// Stream ever holds.
	Window int
	// ManualAck leaves acknowledging to the consumer (Ack): the kernel
	// relaying a stream to a plugin acknowledges what that plugin
	// acknowledged. Otherwise Next acknowledges the chunks it took each
	// time half the window (rounded up) was taken since the last ack.
	ManualAck bool
}

// window returns the window o asks for, within [1, wire.MaxStreamWindow].
func (o StreamOptions) window() int64 {
	switch {
	case o.Window <= 0:
		return wire.DefaultStreamWindow
	case o.Window > wire.MaxStreamWindow:
		return wire.MaxStreamWindow
	}
	return int64(o.Window)
}

// Stream is the host's end of a provider's stream (protocol 1.1,
// docs/protocol.md §5.12): the answer to one provider/invoke that asked
// for a stream, as chunks. Create it with OpenStream; take the chunks
// with Next until it returns an error (io.EOF at the normal end); call
// Close when done, always (it cancels a stream that has not ended).
//
// The Stream holds at most its window of chunks: the plugin may send
// only so many beyond the last one acknowledged, and a chunk beyond that
// (or out of sequence) fails the stream with ErrFlowControl instead of
// being kept.
//
// Next and Close are called by one goroutine, the consumer; Ack and Peak
// are safe from any.
type Stream struct {
	c      *Client
	id     int64
	window int64
	// windowBytes is the byte window the producer honours (protocol 1.2):
	// the chunk data it may have unacknowledged; zero for a producer of
	// an earlier protocol, whose chunk window bounds its bytes instead.
	windowBytes int64
	every       int64 // auto-ack once this many chunks were taken since the last ack
	manual      bool
	ctx         context.Context
	ch          chan *wire.Message // the final response, from deliver
	ready       chan struct{}      // a chunk or a violation arrived (capacity 1)
	timer       *time.Timer        // the stream's own timeout, or nil
	timeout     <-chan time.Time

	// The consumer's state (Next and Close).
	final *wire.Message // the response, once read: the end, after the chunks
	ended bool
	err   error  // what Next returns once ended: io.EOF or the failure
	lent  []byte // the buffer of the chunk Next returned last, the consumer's until the next Next

	mu struct {
		sync.Mutex
		buf      fifo[received] // received, not yet taken
		free     [][]byte       // buffers of chunks taken and given back, for push to fill again
		received int64          // seq of the last chunk received
		taken    int64          // chunks taken by Next
		acked    int64          // the last seq acknowledged to the plugin
		unacked  fifo[int64]    // the sizes of the chunks received beyond acked, in order
		bytes    int64          // their sum: the chunk data unacknowledged
		held     int64          // the chunk data buf holds
		fault    error          // a flow control violation, once seen
		peak     int            // the most chunks buf ever held
		peakHeld int64          // the most chunk data buf ever held
		gone     bool           // the stream ended: chunks are dropped
	}
}

// OpenStream sends provider/invoke for the provider ref with input (nil
// for none) and the traceparent ctx carries (docs/protocol.md §5.13), if
// any, asking for a stream with the window of opts, and returns the host's
// end of the stream. A plugin of protocol 1.4 or later that did not
// announce the "streams" feature (§4.6) is asked for no stream, and
// one that did not announce "trace" is sent no traceparent. ctx bounds the whole stream as it bounds a
// Call (the call timeout when it has no deadline, or the timeout of
// WithCallTimeout), counted from OpenStream: when it ends first, Next
// fails with its cause and $/cancel is sent. A plugin that does not stream
// answers normally: its output is then the stream's one chunk.
//
// OpenStream fails as Call does before an answer: with ErrClosed after
// Close, the *CrashError of a plugin that is down, or an encoding error.
// On success the caller MUST call Close.
func (c *Client) OpenStream(ctx context.Context, ref string, input json.RawMessage, opts StreamOptions) (*Stream, error) {
	c.growPipe.Do(func() { c.proc.GrowStdout(streamPipeSize) })
	s := &Stream{c: c, window: opts.window(), manual: opts.ManualAck, ctx: ctx,
		ch: make(chan *wire.Message, 1), ready: make(chan struct{}, 1)}
	s.window, s.windowBytes = c.streamWindow(s.window)
	s.every = (s.window + 1) / 2
	pc := pendingCall{ch: s.ch, ctx: ctx}
	if d, ok := c.ownTimeout(ctx); ok {
		pc.due, pc.latest = c.clock(time.Now(), d)
		pc.timeout = d
		s.timer = startTimer(d)
		s.timeout = s.timer.C
	}
	params := wire.ProviderInvokeParams{Ref: ref, Input: input, Traceparent: wire.Traceparent(ctx)}
	streams := c.uses(wire.HasStreams)
	if streams {
		params.Stream = &wire.StreamParams{Window: int(s.window), WindowBytes: c.opts.windowBytes}
		c.used(wire.HasStreams)
	}
	s.id = c.nextID.Add(1)
	frame, err := encodeRequest(s.id, wire.MethodProviderInvoke, c.untraced(params))
	if err == nil {
		if err = c.registerStream(s, pc, streams); err == errDown {
			err = c.awaitTerminal(ctx, s.timeout)
		} else if err == nil {
			if err = c.send(ctx, frameWait, s.id, frame); err == nil {
				return s, nil
			}
			c.unregister(s.id)
			c.dropStream(s.id)
			err = c.awaitTerminal(ctx, s.timeout)
		}
	}
	s.stopTimer()
	return nil, c.named(wire.MethodProviderInvoke, err)
}

// registerStream records s as a pending call and, when the request asks
// for a stream (streams), a stream in flight, under one lock, so that its
// first chunk finds it: the refusals are register's. A request to a
// plugin that does not use streams asks for none: its answer is the
// stream's one item, and a chunk for it is malformed.
func (c *Client) registerStream(s *Stream, p pendingCall, streams bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st := c.mu.state.stage; {
	case st.terminal() || st.closing():
		return c.terminalErrLocked()
	case st.down():
		return errDown
	}
	if streams {
		if c.mu.streams == nil {
			c.mu.streams = map[int64]*Stream{}
		}
		c.mu.streams[s.id] = s
	}
	c.mu.pending[s.id] = p
	return nil
}

// dropStream forgets the stream of request id: its later chunks are
// dropped as late ones.
func (c *Client) dropStream(id int64) {
	c.mu.Lock()
	delete(c.mu.streams, id)
	c.mu.Unlock()
}

// Next returns the next chunk, which is valid until the next call of Next
// or Close: its memory then holds a later chunk (so that a stream of any
// length reuses the memory of its window, allocating nothing per chunk).
// A consumer that keeps a chunk copies it. Next validates a chunk the
// reader only cut from its frame (the Go SDK's layout, so that the scan
// runs on the consumer's goroutine) before it returns it; any other was
// validated with its frame: a chunk that is not valid JSON is a protocol
// violation, which stops the plugin and fails the stream with an error
// wrapping ErrProtocol. At the normal end it returns io.EOF; on
// failure the error, as Call returns it: the plugin's error answer (a
// *protocol.Error, wrapped), the *CrashError at once when the plugin
// crashed (the chunks not taken yet are dropped), the cause of ctx or
// context.DeadlineExceeded, an error wrapping ErrFlowControl, or ErrClosed.
// After the end, Next returns the same error again. A failure other than
// the plugin's own answer or its crash cancels the request with $/cancel.
func (s *Stream) Next() (json.RawMessage, error) {
	if s.lent != nil {
		s.giveBack(s.lent)
		s.lent = nil
	}
	for {
		if s.ended {
			return nil, s.err
		}
		if s.final == nil {
			select {
			case <-s.c.dead: // at once, whatever is buffered
				return nil, s.fail(s.c.terminalErr(), false)
			default:
			}
		}
		if s.ctx.Err() != nil {
			return nil, s.fail(context.Cause(s.ctx), true)
		}
		chunk, ok, fault := s.take()
		switch {
		case fault != nil:
			return nil, s.fail(fault, true)
		case ok && !chunk.valid && !wire.ValidChunkData(chunk.data):
			// Cut unvalidated by the reader (wire.CutChunkFrame): the
			// frame was not JSON, a protocol violation like any other.
			err := fmt.Errorf("%w: stdout: $/stream/chunk of request %d: the data is not valid JSON", ErrProtocol, s.id)
			s.c.fault(err)
			return nil, s.fail(err, false)
		case ok:
			s.lent = chunk.data
			return chunk.data, nil
		case s.final != nil:
			return s.finish()
		}
		select {
		case <-s.ready:
		case m := <-s.ch:
			s.final = m // the chunks before it are buffered already
		case <-s.c.dead:
			return nil, s.fail(s.c.terminalErr(), false)
		case <-s.ctx.Done():
			return nil, s.fail(context.Cause(s.ctx), true)
		case <-s.timeout:
			if left, ok := s.c.extended(s.id); ok {
				s.timer.Reset(left)
				continue
			}
			return nil, s.fail(context.DeadlineExceeded, true)
		}
	}
}

// received is a chunk the Stream holds: a copy of its data, and whether
// the frame's decoding validated it already (else Next does).
type received struct {
	data  []byte
	valid bool
}

// take pops the next buffered chunk, acknowledging as StreamOptions says,
// or returns the flow control violation that ended the stream.
func (s *Stream) take() (chunk received, ok bool, fault error) {
	s.mu.Lock()
	if s.mu.fault != nil {
		s.mu.Unlock()
		return received{}, false, s.mu.fault
	}
	chunk, ok = s.mu.buf.pop()
	var ack int64
	if ok {
		s.mu.taken++
		s.mu.held -= int64(len(chunk.data))
		if !s.manual && s.mu.taken-s.mu.acked >= s.every {
			ack = s.mu.taken
			s.ackedLocked(ack)
		}
	}
	s.mu.Unlock()
	if ack > 0 {
		s.sendAck(ack)
	}
	return chunk, ok, nil
}

// giveBack returns the buffer of a chunk the consumer is done with, for a
// later chunk: the buffers in use never exceed the window's chunks and the
// one lent, as the buffer (of at most the window) and free together hold
// what push filled and Next did not lend.
func (s *Stream) giveBack(b []byte) {
	s.mu.Lock()
	if !s.mu.gone {
		s.mu.free = append(s.mu.free, b)
	}
	s.mu.Unlock()
}

// bufferFor returns a buffer for a chunk of n bytes: a free one large
// enough, else a new one, for which a free one too small is dropped, so
// that the buffers of a stream never outnumber its window and the one
// lent, whatever the sizes of its chunks. The caller holds s.mu.
func (s *Stream) bufferFor(n int) []byte {
	last := len(s.mu.free) - 1
	for i := last; i >= 0; i-- {
		if b := s.mu.free[i]; cap(b) >= n {
			s.mu.free[i] = s.mu.free[last]
			s.mu.free[last] = nil
			s.mu.free = s.mu.free[:last]
			return b[:n]
		}
	}
	if last >= 0 {
		s.mu.free[last] = nil
		s.mu.free = s.mu.free[:last]
	}
	return make([]byte, n)
}

// finish ends the stream with the plugin's answer, read after its
// chunks: an error answer fails it, and an output is one more chunk.
func (s *Stream) finish() (json.RawMessage, error) {
	m := s.final
	s.end(io.EOF, false) // deliver removed the call and ended its children
	if err := decodeResponse(m, nil, s.c.opts.Redact); err != nil {
		s.err = s.c.named(wire.MethodProviderInvoke, err)
		return nil, s.err
	}
	var res wire.OutputResult
	if err := wire.Decode(m.Result, &res); err != nil {
		s.err = s.c.named(wire.MethodProviderInvoke, fmt.Errorf("decode result: %w", err))
		return nil, s.err
	}
	if res.Output != nil {
		return res.Output, nil
	}
	return nil, io.EOF
}

// fail ends the stream with err, named as Call names it, cancelling the
// request when cancel is set, and returns it.
func (s *Stream) fail(err error, cancel bool) error {
	s.end(s.c.named(wire.MethodProviderInvoke, err), cancel)
	return s.err
}

// end ends the stream with err: the chunks buffered are dropped, later
// ones too, and with cancel the request, unless it was answered, is
// withdrawn ($/cancel).
func (s *Stream) end(err error, cancel bool) {
	s.ended, s.err = true, err
	s.lent = nil
	s.mu.Lock()
	s.mu.gone = true
	s.mu.buf = fifo[received]{}
	s.mu.held = 0
	s.mu.free = nil
	s.mu.Unlock()
	s.c.dropStream(s.id)
	if cancel && s.final == nil { // not answered yet

		s.c.unregister(s.id)
		s.c.cancelRemote(s.id)
	}
	s.stopTimer()
}

func (s *Stream) stopTimer() {
	if s.timer != nil {
		stopTimer(s.timer)
		s.timer, s.timeout = nil, nil
	}
}

// Close ends the stream: one that has not ended is cancelled ($/cancel),
// and Next then returns an error. Close is idempotent.
func (s *Stream) Close() {
	if !s.ended {
		s.end(s.c.named(wire.MethodProviderInvoke, errStreamClosed), true)
	}
}

// Ack acknowledges the chunks up to seq, which lets the plugin send up to
// seq + window: with StreamOptions.ManualAck, the consumer's duty (without
// it, Next acknowledges). seq is capped to the chunks Next has taken, so
// the Stream never holds more than its window; an ack not above the last
// one does nothing.
func (s *Stream) Ack(seq int64) {
	s.mu.Lock()
	seq = min(seq, s.mu.taken)
	if seq <= s.mu.acked || s.mu.gone {
		s.mu.Unlock()
		return
	}
	s.ackedLocked(seq)
	s.mu.Unlock()
	s.sendAck(seq)
}

// ackedLocked records that the chunks up to seq are acknowledged: the
// producer's credit grows by their chunks and bytes. The caller holds
// s.mu and sends the ack.
func (s *Stream) ackedLocked(seq int64) {
	for ; s.mu.acked < seq; s.mu.acked++ {
		n, _ := s.mu.unacked.pop()
		s.mu.bytes -= n
	}
}

// streamWindow returns the chunk window and the byte window of a stream
// this client's plugin is asked to produce with window: the byte window
// is Limits.StreamWindowBytes for a plugin of protocol 1.2 or later,
// which honours it; a plugin of an earlier protocol does not know it, so
// its chunk window is what keeps its bytes within it: one chunk per
// frame's worth (4 MiB) of the byte window, at least one.
func (c *Client) streamWindow(window int64) (chunks, bytes int64) {
	if c.streamBytes {
		return window, c.opts.windowBytes
	}
	return min(window, max(1, c.opts.windowBytes/int64(c.opts.maxFrame))), 0
}

// sendAck sends $/stream/ack for seq, ahead of queued calls.
func (s *Stream) sendAck(seq int64) {
	frame := append(make([]byte, 0, 96), `{"jsonrpc":"2.0","method":"$/stream/ack","params":{"id":`...)
	frame = strconv.AppendInt(frame, s.id, 10)
	frame = append(frame, `,"seq":`...)
	frame = strconv.AppendInt(frame, seq, 10)
	frame = append(frame, "}}\n"...)
	_ = s.c.send(context.Background(), frameUrgent, 0, frame)
}

// buffered returns how many chunks the stream holds, received and not
// taken yet: at most its window.
func (s *Stream) buffered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.buf.len()
}

// Peak returns the most chunks, and apart the most chunk data in bytes,
// the stream has held at once: chunks at most its window, whatever the
// plugin sent; bytes, from a plugin of protocol 1.2 or later, at most its
// byte window (Limits.StreamWindowBytes, and one chunk larger than that
// alone), from an earlier one at most its window of chunks, which the host
// asked of it with the byte window in mind (see docs/protocol.md §5.12).
func (s *Stream) Peak() (chunks int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.peak, s.mu.peakHeld
}

// Window returns the stream's window.
func (s *Stream) Window() int { return int(s.window) }

// push adds a copy of the chunk seq, read from the plugin (data may
// alias the reader's buffer), unless it breaks the flow control: then the
// stream fails (its consumer sees the error at its next Next, which
// cancels the request) and the chunk is dropped.
func (s *Stream) push(seq int64, data json.RawMessage, valid bool) error {
	s.mu.Lock()
	var fault error
	switch {
	case s.mu.gone, s.mu.fault != nil:
	case seq != s.mu.received+1:
		fault = fmt.Errorf("%w: chunk %d after chunk %d", ErrFlowControl, seq, s.mu.received)
	case seq > s.mu.acked+s.window:
		fault = fmt.Errorf("%w: chunk %d is beyond the window (%d chunks beyond the last one acknowledged, %d)",
			ErrFlowControl, seq, s.window, s.mu.acked)
	case s.windowBytes > 0 && seq > s.mu.acked+1 && s.mu.bytes+int64(len(data)) > s.windowBytes:
		fault = fmt.Errorf("%w: chunk %d of %d bytes is beyond the byte window (%d bytes unacknowledged before it, window %d bytes)",
			ErrFlowControl, seq, len(data), s.mu.bytes, s.windowBytes)
	default:
		n := int64(len(data))
		b := s.bufferFor(len(data))
		copy(b, data)
		s.mu.buf.push(received{data: b, valid: valid})
		s.mu.received = seq
		s.mu.unacked.push(n)
		s.mu.bytes += n
		s.mu.held += n
		s.mu.peak = max(s.mu.peak, s.mu.buf.len())
		s.mu.peakHeld = max(s.mu.peakHeld, s.mu.held)
	}
	if fault != nil {
		s.mu.fault = fault
		s.mu.buf = fifo[received]{}
		s.mu.held = 0
	}
	s.mu.Unlock()
	select {
	case s.ready <- struct{}{}:
	default:
	}
	return fault
}

// streamChunk handles a $/stream/chunk from the plugin (the reading
// goroutine). A chunk for a stream in flight goes to it; one for no
// request in flight (a late chunk of a stream the host cancelled) is
// dropped quietly. It returns why a chunk is malformed: its params do
// not decode, its id was never sent, or its request asked for no stream.
func (c *Client) streamChunk(params json.RawMessage) error {
	var p wire.StreamChunkParams
	if err := wire.DecodeChunk(params, &p); err != nil { // params were validated with the frame
		return fmt.Errorf("%s params: %w", wire.MethodStreamChunk, c.redact.err(err))
	}
	return c.chunk(&p, true)
}

// chunk delivers the chunk p, whose fields may alias the reader's buffer
// (wire.FrameReader.ReadChunkOrMessage): what is kept is copied. valid
// says whether its data was validated with its frame; if not, Next
// validates it. It returns why the chunk is malformed, if it is.
func (c *Client) chunk(p *wire.StreamChunkParams, valid bool) error {
	id, err := strconv.ParseInt(string(p.ID), 10, 64)
	if err != nil || id <= 0 || id > c.nextID.Load() {
		return fmt.Errorf("a chunk for id %s, which the host never sent", quoteID(c.opts.Redact(string(p.ID))))
	}
	c.mu.Lock()
	s := c.mu.streams[id]
	_, pending := c.mu.pending[id]
	c.mu.Unlock()
	switch {
	case s == nil && !pending:
		c.log.Debug("dropping a chunk for no stream in flight", "id", id, "seq", p.Seq)
	case s == nil:
		return fmt.Errorf("a chunk (seq %d) for request %d, which asked for no stream", p.Seq, id)
	default:
		if fault := s.push(p.Seq, p.Data, valid); fault != nil {
			c.warn("plugin broke a stream's flow control: cancelling the request", "id", id, "error", fault)
		}
	}
	return nil
}
