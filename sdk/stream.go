package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/extkernel/extkernel/internal/jsonscan"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// StreamFunc handles a call of a streaming provider (docs/protocol.md
// §5.12): it sends its answer as chunks with send, then returns nil for
// the normal end of the stream or an error for its failed end (answered
// as a HandlerFunc's error is). input is the call's input, possibly empty.
//
// send marshals chunk to JSON (a json.RawMessage is validated and
// compacted, as an output is) and sends it. When the host asked for a
// stream, send blocks while the host's window of chunks is
// unacknowledged (a slow consumer holds the handler back), and fails once
// the request is cancelled (ctx's cause, wrapped: the host's $/cancel, its
// deadline, the plugin stopping) or serving ended; the handler then
// returns. When the host asked for no stream (a 1.0 host, or
// kernel.CallProvider), the chunks are collected and answered as one
// output, the JSON array of the chunks; send then fails once they
// exceed 4 MiB, the largest frame. send is safe for concurrent use; it
// fails once the handler has returned.
type StreamFunc func(ctx context.Context, input json.RawMessage, send func(chunk any) error) error

// StreamProvider registers h as the streaming provider ref, described by
// description. It is declared as a provider ("plugin/<name>/<ref>" to
// the host), which the host may ask for a stream.
func (p *Plugin) StreamProvider(ref, description string, h StreamFunc) {
	p.register("StreamProvider", func(r *registry) {
		mustName("StreamProvider", "ref", ref)
		mustHandler("StreamProvider", h == nil)
		mustNewRef(r, "StreamProvider", ref)
		r.stream[ref] = h
		r.decls.Providers = append(r.decls.Providers, protocol.ProviderDecl{Ref: ref, Description: description})
	})
}

// mustNewRef panics when ref is registered already, as a provider or a
// streaming provider.
func mustNewRef(r *registry, op, ref string) {
	_, p := r.provider[ref]
	_, s := r.stream[ref]
	if p || s {
		panic(fmt.Sprintf("sdk: %s: duplicate ref %q", op, ref))
	}
}

// providerRefs returns the refs of every provider, streaming or not, for
// an unknown-target error.
func (r *registry) providerRefs() map[string]struct{} {
	refs := make(map[string]struct{}, len(r.provider)+len(r.stream))
	for ref := range maps.Keys(r.provider) {
		refs[ref] = struct{}{}
	}
	for ref := range maps.Keys(r.stream) {
		refs[ref] = struct{}{}
	}
	return refs
}

// maxCollected bounds the chunks a streaming provider answers as one
// output: what fits one frame with its envelope.
const maxCollected = wire.DefaultMaxFrame - 1024

// errStreamEnded is send's error once the handler returned.
var errStreamEnded = errors.New("sdk: send after the stream handler returned")

// producer is a stream the plugin produces for a host request: its window
// and what the host acknowledged. Its fields are guarded by mu; send
// holds sending for a whole send, so chunks go out in order.
type producer struct {
	window      int64
	windowBytes int64         // the host's window_bytes (protocol 1.2), or 0
	credit      chan struct{} // an ack came (capacity 1)
	sending     sync.Mutex
	frame       []byte // the last chunk's frame, reused; under sending

	mu struct {
		sync.Mutex
		sent, acked int64
		unacked     []int64 // the data sizes of the chunks sent beyond acked, in order
		bytes       int64   // their sum
		done        bool
	}
}

// serveStream runs the streaming provider h for the request whose
// handler context is ctx: as a stream when params ask for one, else
// collecting the chunks into one output.
func (s *session) serveStream(ctx context.Context, params *wire.ProviderInvokeParams, h StreamFunc) (any, error) {
	if params.Stream == nil {
		return collect(ctx, params.Input, h)
	}
	if w := params.Stream.Window; w < 1 || w > wire.MaxStreamWindow {
		return nil, Errorf(protocol.CodeInvalidParams, "provider/invoke: stream window %d is not between 1 and %d", w, wire.MaxStreamWindow)
	}
	if params.Stream.WindowBytes < 0 {
		return nil, Errorf(protocol.CodeInvalidParams, "provider/invoke: stream window_bytes %d is negative", params.Stream.WindowBytes)
	}
	id := s.parentOf(ctx) // the request's id
	key := idKey(id)
	pr := &producer{window: int64(params.Stream.Window), windowBytes: params.Stream.WindowBytes, credit: make(chan struct{}, 1)}
	s.mu.Lock()
	if s.mu.producing == nil {
		s.mu.producing = map[string]*producer{}
	}
	s.mu.producing[key] = pr
	s.mu.Unlock()
	defer func() {
		pr.mu.Lock()
		pr.mu.done = true
		pr.mu.Unlock()
		s.mu.Lock()
		delete(s.mu.producing, key)
		s.mu.Unlock()
	}()
	send := func(chunk any) error { return s.sendChunk(ctx, id, pr, chunk) }
	if err := h(ctx, params.Input, send); err != nil {
		return nil, err
	}
	return emptyObject, nil
}

// sendChunk sends chunk as the next chunk of pr, the stream answering
// request id, once the window allows. The frame is assembled in pr's
// buffer, a json.RawMessage compacted straight into it, and written with
// its newline: the data is copied once, and scanned once. The data goes
// in first, after room for the frame's head, so that its size is known
// for the byte window before the credit is awaited; the head, which holds
// the seq, is written in front of it once the credit came.
func (s *session) sendChunk(ctx context.Context, id json.RawMessage, pr *producer, chunk any) error {
	if ctx.Err() != nil {
		return fmt.Errorf("stream cancelled: %w", context.Cause(ctx))
	}
	raw, isRaw := chunk.(json.RawMessage)
	if !isRaw {
		b, err := json.Marshal(chunk)
		if err != nil {
			return fmt.Errorf("sdk: chunk: %w", err)
		}
		raw = b
	}
	pr.sending.Lock()
	defer pr.sending.Unlock()
	room := len(chunkHead) + len(id) + len(`,"seq":,"data":`) + 20 // 20 digits hold any seq
	frame := slices.Grow(pr.frame[:0], room+len(raw)+3)[:room]
	var err error
	switch {
	case len(raw) == 0:
		frame = append(frame, "null"...)
	case isRaw:
		if frame, err = jsonscan.AppendCompact(frame, raw); err != nil {
			return fmt.Errorf("sdk: chunk: json.RawMessage: %w", err)
		}
	default:
		frame = append(frame, raw...)
	}
	size := int64(len(frame) - room)
	frame = append(frame, "}}\n"...)
	if cap(frame) <= 2*wire.DefaultMaxFrame {
		pr.frame = frame
	}
	seq, err := s.awaitCredit(ctx, pr, size)
	if err != nil {
		return err
	}
	var headBuf [96]byte
	head := append(headBuf[:0], chunkHead...)
	head = append(head, id...)
	head = append(head, `,"seq":`...)
	head = strconv.AppendInt(head, seq, 10)
	head = append(head, `,"data":`...)
	frame = frame[room-len(head):]
	copy(frame, head)
	if err := s.fw.WriteLine(frame); err != nil {
		s.cancelAbort(fmt.Errorf("write to host: %w", err))
		return fmt.Errorf("write to host: %w", err)
	}
	return nil
}

// chunkHead starts the frame of a chunk; the request's id follows.
const chunkHead = `{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":`

// awaitCredit waits until the window of pr allows one more chunk of size
// bytes of data (its chunks, and, when the host asked for a byte window,
// its bytes: a chunk larger than the byte window goes alone), records it
// as sent and returns its seq, or why it will not: the request was
// cancelled, serving ended, or the handler returned. The caller holds
// pr.sending, so chunks are numbered in the order they are written.
func (s *session) awaitCredit(ctx context.Context, pr *producer, size int64) (int64, error) {
	for {
		pr.mu.Lock()
		done := pr.mu.done
		ok := pr.mu.sent < pr.mu.acked+pr.window &&
			(pr.windowBytes == 0 || pr.mu.sent == pr.mu.acked || pr.mu.bytes+size <= pr.windowBytes)
		var seq int64
		if ok && !done {
			pr.mu.sent++
			seq = pr.mu.sent
			pr.mu.unacked = append(pr.mu.unacked, size)
			pr.mu.bytes += size
		}
		pr.mu.Unlock()
		switch {
		case done:
			return 0, errStreamEnded
		case ok:
			return seq, nil
		}
		s.sched.release() // the acks must be read while this handler waits
		select {
		case <-pr.credit:
		case <-ctx.Done():
			return 0, fmt.Errorf("stream cancelled: %w", context.Cause(ctx))
		case <-s.readDone:
			return 0, fmt.Errorf("stream ended: %w", ErrNotServing)
		}
	}
}

// marshalChunk encodes a chunk as an output is encoded: a json.RawMessage
// validated and compacted, anything else with json.Marshal.
func marshalChunk(chunk any) (json.RawMessage, error) {
	if raw, ok := chunk.(json.RawMessage); ok {
		if len(raw) == 0 {
			return json.RawMessage("null"), nil
		}
		b, err := jsonscan.AppendCompact(nil, raw)
		if err != nil {
			return nil, fmt.Errorf("sdk: chunk: json.RawMessage: %w", err)
		}
		return b, nil
	}
	b, err := json.Marshal(chunk)
	if err != nil {
		return nil, fmt.Errorf("sdk: chunk: %w", err)
	}
	return b, nil
}

// collect runs h for a request that asked for no stream and answers the
// chunks it sends as one output, their JSON array.
func collect(ctx context.Context, input json.RawMessage, h StreamFunc) (any, error) {
	var mu sync.Mutex
	arr := []byte{'['}
	done := false
	send := func(chunk any) error {
		raw, err := marshalChunk(chunk)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case done:
			return errStreamEnded
		case ctx.Err() != nil:
			return fmt.Errorf("stream cancelled: %w", context.Cause(ctx))
		case len(arr)+len(raw)+1 > maxCollected:
			return fmt.Errorf("sdk: the chunks exceed %d bytes, the most one output holds (the host asked for no stream)", maxCollected)
		}
		if len(arr) > 1 {
			arr = append(arr, ',')
		}
		arr = append(arr, raw...)
		return nil
	}
	err := h(ctx, input, send)
	mu.Lock()
	done = true
	mu.Unlock()
	if err != nil {
		return nil, err
	}
	return output(json.RawMessage(append(arr, ']')), nil)
}

// streamAck handles the host's $/stream/ack for a stream the plugin
// produces; one for no such stream (it ended) is ignored.
func (s *session) streamAck(params json.RawMessage) {
	var p wire.StreamAckParams
	if err := wire.Decode(params, &p); err != nil {
		s.logWarn("ignoring malformed $/stream/ack", "params", string(params))
		return
	}
	s.mu.Lock()
	pr := s.mu.producing[idKey(p.ID)]
	s.mu.Unlock()
	if pr == nil {
		return
	}
	pr.mu.Lock()
	if seq := min(p.Seq, pr.mu.sent); seq > pr.mu.acked {
		k := seq - pr.mu.acked
		for _, n := range pr.mu.unacked[:k] {
			pr.mu.bytes -= n
		}
		pr.mu.unacked = append(pr.mu.unacked[:0], pr.mu.unacked[k:]...)
		pr.mu.acked = seq
	}
	pr.mu.Unlock()
	select {
	case pr.credit <- struct{}{}:
	default:
	}
}

// CallStream calls method of capability through the host asking for its
// answer as a stream (capability/call with stream, protocol 1.1,
// docs/protocol.md §5.12), and returns the chunks as a sequence: each one
// with a nil error, in order; a failure ends the sequence with one (nil,
// error) pair, with the errors of Call, and a *protocol.Error with code
// -32603 (internal error) when the host breaks the stream's flow control (a
// chunk beyond the window or out of sequence: the call is then
// cancelled); the normal end without one. A
// provider that does not stream answers its output, the sequence's one
// chunk. The window is wire.DefaultStreamWindow (16 chunks): the host
// relays at most that many beyond the last one consumed, and the plugin
// acknowledges as the range consumes, so a slow consumer holds the
// provider back, end to end.
//
// Each range over the sequence makes the call once. Breaking out of the
// range, or ctx ending, cancels the call ($/cancel); the provider sees
// it as the failure of its next send. A handler's context makes the call
// name the handler's request as its parent, and the traceparent ctx
// carries (Traceparent) goes with the call, as with Call. CallStream is
// safe for concurrent use; while a range waits for a chunk the plugin
// keeps serving host requests.
func (p *Plugin) CallStream(ctx context.Context, capability, method string, input any) iter.Seq2[json.RawMessage, error] {
	return func(yield func(json.RawMessage, error) bool) {
		name := capability + "." + method
		p.mu.Lock()
		s := p.mu.serving
		p.mu.Unlock()
		if s == nil {
			yield(nil, fmt.Errorf("call %q: %w", name, ErrNotServing))
			return
		}
		params := wire.CapabilityCallParams{Capability: capability, Method: method}
		if input != nil {
			raw, err := marshalInput(input)
			if err != nil {
				yield(nil, fmt.Errorf("call %q: marshal input: %w", name, err))
				return
			}
			params.Input = raw
		}
		s.callStream(ctx, name, params, wire.DefaultStreamWindow, yield)
	}
}

// consumer is a stream the plugin consumes for one of its calls: the
// chunks the reader received and the range has not taken, and the last
// seq acknowledged. A chunk past acked plus the window (the host broke
// the flow control) closes broken, found when it arrives, however fast
// the range takes the chunks.
type consumer struct {
	chunks   chan json.RawMessage
	broken   chan struct{}
	received int64        // the last seq received; the reader's, under session.mu
	acked    atomic.Int64 // the last seq acknowledged, stored before the ack is sent
	fault    error        // why broken closed; set before
}

// callStream makes the stream call with params and window, yielding its
// chunks, and ends the stream as its range or ctx says.
func (s *session) callStream(ctx context.Context, name string, params wire.CapabilityCallParams, window int, yield func(json.RawMessage, error) bool) {
	fail := func(err error) { yield(nil, fmt.Errorf("call %q: %w", name, err)) }
	if err := s.callable(); err != nil {
		fail(err)
		return
	}
	if err := ctx.Err(); err != nil {
		fail(err)
		return
	}
	if !s.host().Has(wire.HasStreams) {
		fail(fmt.Errorf("host speaks protocol %s without the %q feature: %w", s.hostVersion, wire.FeatureStreams, ErrCallsUnsupported))
		return
	}
	h := s.handlerOf(ctx)
	if h != nil {
		params.Parent = h.id
	}
	params.Traceparent = s.traceparent(ctx)
	params.Stream = &wire.StreamParams{Window: window}
	id, key, answer := s.startCall()
	in := &consumer{chunks: make(chan json.RawMessage, window), broken: make(chan struct{})}
	s.mu.Lock()
	if s.mu.consuming == nil {
		s.mu.consuming = map[string]*consumer{}
	}
	s.mu.consuming[key] = in
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.mu.consuming, key)
		s.mu.Unlock()
	}()
	s.sched.release()
	if err := s.writeCall(id, &params, h); err != nil {
		s.forget(key)
		fail(err)
		return
	}
	c := &consumption{s: s, id: id, key: key, in: in, answer: answer, every: int64(window+1) / 2}
	c.run(ctx, name, yield)
}

// consumption is one range over a stream call.
type consumption struct {
	s            *session
	id           json.RawMessage
	key          string
	in           *consumer
	answer       chan *wire.Message
	every        int64 // ack once this many were taken since the last ack
	taken, acked int64
}

// run yields the chunks until the answer, a failure, or the range's end.
func (c *consumption) run(ctx context.Context, name string, yield func(json.RawMessage, error) bool) {
	fail := func(err error) { yield(nil, fmt.Errorf("call %q: %w", name, err)) }
	for {
		var chunk json.RawMessage
		select {
		case <-c.in.broken: // first: no chunk is taken after the one that broke it
			c.withdraw()
			yield(nil, Errorf(wire.CodeInternalError, "call %q: %v", name, c.in.fault))
			return
		default:
		}
		select {
		case chunk = <-c.in.chunks:
		default:
			select {
			case chunk = <-c.in.chunks:
			case m := <-c.answer:
				c.finish(m, yield)
				return
			case <-c.in.broken:
				c.withdraw()
				yield(nil, Errorf(wire.CodeInternalError, "call %q: %v", name, c.in.fault))
				return
			case <-ctx.Done():
				if !c.s.forget(c.key) {
					c.finish(<-c.answer, yield) // answered meanwhile: sent at once
					return
				}
				c.s.cancelOut(c.id)
				fail(ctx.Err())
				return
			case <-c.s.readDone:
				c.s.forget(c.key)
				fail(fmt.Errorf("serving ended before the host answered: %w", ErrNotServing))
				return
			case <-c.s.abort.Done():
				c.s.forget(c.key)
				fail(fmt.Errorf("serving ended before the host answered: %w", ErrNotServing))
				return
			}
		}
		c.taken++
		if c.taken-c.acked >= c.every {
			c.acked = c.taken
			c.in.acked.Store(c.acked) // before the ack: a chunk it allows may come at once
			c.s.sendAck(c.id, c.acked)
		}
		if !yield(chunk, nil) {
			c.withdraw()
			return
		}
	}
}

// finish yields the chunks received before the answer m, then its output
// (one more chunk) or its error.
func (c *consumption) finish(m *wire.Message, yield func(json.RawMessage, error) bool) {
	for drained := false; !drained; {
		select {
		case chunk := <-c.in.chunks:
			if !yield(chunk, nil) {
				return
			}
		default:
			drained = true
		}
	}
	out, err := callOutput(m)
	switch {
	case err != nil:
		yield(nil, err)
	case out != nil:
		yield(out, nil)
	}
}

// withdraw cancels the call, unless it was answered already.
func (c *consumption) withdraw() {
	if c.s.forget(c.key) {
		c.s.cancelOut(c.id)
	}
}

// sendAck sends $/stream/ack for the chunks up to seq of the stream
// answering the plugin's request id.
func (s *session) sendAck(id json.RawMessage, seq int64) {
	m, err := wire.NewNotification(wire.MethodStreamAck, wire.StreamAckParams{ID: id, Seq: seq})
	if err == nil {
		s.write(m)
	}
}

// streamChunk routes the host's $/stream/chunk to the stream of the
// plugin's call it belongs to. A chunk for no stream in flight (the call
// ended) is dropped; one out of sequence or beyond the window (the host
// broke the flow control) fails the stream, which the consumer then
// cancels.
func (s *session) streamChunk(params json.RawMessage) {
	var p wire.StreamChunkParams
	if err := wire.DecodeChunk(params, &p); err != nil { // params were validated with the frame
		s.logWarn("ignoring malformed $/stream/chunk", "params", fmt.Sprintf("%.120s", params))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.mu.consuming[idKey(p.ID)]
	if in == nil {
		s.logDebug("ignoring a chunk for no stream in flight", "id", string(p.ID))
		return
	}
	select {
	case <-in.broken:
		return
	default:
	}
	var fault error
	if p.Seq != in.received+1 {
		fault = fmt.Errorf("stream: chunk %d after chunk %d", p.Seq, in.received)
	} else if acked := in.acked.Load(); p.Seq > acked+int64(cap(in.chunks)) {
		fault = fmt.Errorf("stream: chunk %d is beyond the window: %d acknowledged, window %d", p.Seq, acked, cap(in.chunks))
	} else {
		select {
		case in.chunks <- p.Data:
			in.received = p.Seq
			return
		default:
			fault = fmt.Errorf("stream: chunk %d is beyond the window of %d", p.Seq, cap(in.chunks))
		}
	}
	in.fault = fault
	close(in.broken)
}
