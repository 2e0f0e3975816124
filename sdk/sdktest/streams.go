package sdktest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// The streams cases ask every provider for its answer as a stream
// (protocol.md §5.12: any provider may be asked for one) and hold the
// producer to its credits.
const (
	caseStreams  = "streams"
	streamPrefix = "stream/"
	// streamWindow is the window of chunks asked for: small, so that a
	// producer runs into it within a few chunks.
	streamWindow = 2
	// streamWindowBytes is the byte window asked for, the host's default
	// stream_window_bytes; a producer of 1.2 or later is held to it.
	streamWindowBytes = 1 << 20
	// overrunWait is how long the suite holds back its first ack once a
	// producer has a full window unacknowledged: a producer ignoring its
	// credits sends the next chunk meanwhile.
	overrunWait = 200 * time.Millisecond
	// streamQueue bounds the chunks of one stream queued for the case;
	// a chunk past it is a flood, counted as beyond the window.
	streamQueue = 64
)

// windowBytesSince is the protocol version from which a producer honours
// window_bytes (§5.12).
var windowBytesSince = semver.MustParse("1.2.0")

// streamChunk is one $/stream/chunk the plugin sent: its params and its
// frame, as the report quotes it.
type streamChunk struct {
	p     wire.StreamChunkParams
	frame string
}

// streamTable routes the plugin's chunks to the stream case that asked
// for them, by request id. It is a leaf lock.
type streamTable struct {
	mu      sync.Mutex
	open    map[string]chan streamChunk
	flooded map[string]bool // streams that had streamQueue chunks unread
}

// openStream registers request key as asking for a stream.
func (s *session) openStream(key string) chan streamChunk {
	ch := make(chan streamChunk, streamQueue)
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	if s.streams.open == nil {
		s.streams.open, s.streams.flooded = map[string]chan streamChunk{}, map[string]bool{}
	}
	s.streams.open[key] = ch
	return ch
}

// closeStream forgets request key: its late chunks are dropped, as the
// host drops a chunk for no request in flight.
func (s *session) closeStream(key string) {
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	delete(s.streams.open, key)
}

// chunk routes a $/stream/chunk to its stream case; a chunk for no stream
// the suite asked for is dropped, as the host drops it (§5.12).
func (s *session) chunk(m *wire.Message) {
	var p wire.StreamChunkParams
	if json.Unmarshal(m.Params, &p) != nil {
		return // malformed params are dropped, like a malformed notify
	}
	frame, _ := json.Marshal(m)
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	ch, ok := s.streams.open[idKey(p.ID)]
	if !ok {
		return
	}
	select {
	case ch <- streamChunk{p: p, frame: string(frame)}:
	default: // more than streamQueue chunks unread: far beyond the window
		s.streams.flooded[idKey(p.ID)] = true
	}
}

// flooded reports whether stream key had more chunks than the case could
// queue.
func (s *session) flooded(key string) bool {
	s.streams.mu.Lock()
	defer s.streams.mu.Unlock()
	return s.streams.flooded[key]
}

// flow is the consumer's account of one stream: what was acknowledged and
// what is in flight, and the bounds the producer is held to.
type flow struct {
	window, windowBytes int64 // windowBytes 0: not held to bytes
	acked, sent         int64
	sizes               []int64 // the data sizes of the unacknowledged chunks
}

// take accounts for chunk c; it returns why c breaks the flow control of
// §5.12, or "".
func (f *flow) take(c streamChunk) string {
	size := int64(len(c.p.Data))
	switch {
	case c.p.Seq != f.sent+1:
		return fmt.Sprintf("chunk seq %d is out of sequence: the next is %d", c.p.Seq, f.sent+1)
	case c.p.Seq > f.acked+f.window:
		return fmt.Sprintf("chunk seq %d is beyond the window: %d acknowledged, window %d, so at most seq %d until the next ack",
			c.p.Seq, f.acked, f.window, f.acked+f.window)
	}
	if f.windowBytes > 0 && len(f.sizes) > 0 {
		var held int64
		for _, n := range f.sizes {
			held += n
		}
		if held+size > f.windowBytes {
			return fmt.Sprintf("chunk seq %d of %d bytes is beyond the byte window: %d bytes unacknowledged, window_bytes %d",
				c.p.Seq, size, held, f.windowBytes)
		}
	}
	f.sent++
	f.sizes = append(f.sizes, size)
	return ""
}

// ack acknowledges every chunk received.
func (f *flow) ack() {
	f.acked, f.sizes = f.sent, f.sizes[:0]
}

// streams runs one stream case per provider, in the order of the call
// cases.
func (r *runner) streams(s *session, res *protocol.InitializeResult) error {
	var ts []target
	for _, t := range targets(res, r.opts.Inputs) {
		if t.kind == "provider" {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		r.add(Case{Name: caseStreams, Status: Pass, Reason: "declares no provider to ask for a stream"})
		return nil
	}
	var windowBytes int64
	if v, err := semver.NewVersion(res.ProtocolVersion); err == nil && !v.LessThan(windowBytesSince) {
		windowBytes = streamWindowBytes
	}
	for _, t := range ts {
		c, err := r.stream(s, t, windowBytes)
		if err != nil {
			return err
		}
		r.add(c)
	}
	return nil
}

// stream asks t for a stream and consumes it as the host does, holding the
// producer to its windows: it acknowledges nothing until the producer has
// a full window unacknowledged, waits overrunWait for a chunk beyond it,
// then acknowledges each chunk it consumed. A chunk out of sequence or
// beyond a window fails the case, quoting its frame; the suite then
// cancels the stream, as the host does.
func (r *runner) stream(s *session, t target, windowBytes int64) (Case, error) {
	name := streamPrefix + t.kind + "/" + t.id
	params := t.params.(wire.ProviderInvokeParams)
	params.Stream = &wire.StreamParams{Window: streamWindow, WindowBytes: streamWindowBytes}
	key, chunks := s.nextKey(), (chan streamChunk)(nil)
	chunks = s.openStream(key)
	defer s.closeStream(key)
	answers, err := s.requestKey(key, t.method, params)
	if err != nil {
		return Case{Name: name, Status: Fail, Reason: t.method + " with stream was not sent" + s.why()}, nil
	}
	f := &flow{window: streamWindow, windowBytes: windowBytes}
	deadline := time.NewTimer(r.opts.CallTimeout)
	defer deadline.Stop()
	var hold <-chan time.Time
	held := false
	for {
		select {
		case c := <-chunks:
			if bad := f.take(c); bad != "" {
				return r.streamViolation(s, name, key, answers, bad, c.frame)
			}
			if !held && f.sent-f.acked == streamWindow {
				held, hold = true, time.After(overrunWait)
			} else if held && hold == nil {
				r.ackStream(s, key, f)
			}
		case <-hold:
			hold = nil
			r.ackStream(s, key, f)
		case a := <-answers:
			return r.streamEnd(s, name, key, chunks, f, a)
		case <-deadline.C:
			return r.streamLate(s, name, key, answers, f)
		case <-s.stdoutDone:
			return Case{Name: name, Status: Fail, Reason: fmt.Sprintf("the stream was not answered after %d chunks%s", f.sent, s.why())}, nil
		case <-r.ctx.Done():
			return Case{}, r.ctx.Err()
		}
	}
}

// ackStream acknowledges every chunk of stream key received so far.
func (r *runner) ackStream(s *session, key string, f *flow) {
	if f.sent > f.acked {
		f.ack()
		_ = s.notify(wire.MethodStreamAck, wire.StreamAckParams{ID: json.RawMessage(key), Seq: f.acked})
	}
}

// streamViolation fails a stream case on a chunk that breaks flow
// control, and cancels the stream as the host does.
func (r *runner) streamViolation(s *session, name, key string, answers chan answer, why, frame string) (Case, error) {
	_ = s.notify(wire.MethodCancel, wire.CancelParams{ID: json.RawMessage(key)})
	if _, ok, err := s.await(r.ctx, answers, time.Now().Add(cancelWait)); err != nil {
		return Case{}, err
	} else if !ok {
		s.abandon(key)
	}
	return Case{Name: name, Status: Fail, Reason: flowReason(why, frame)}, nil
}

// flowReason is the reason of a stream case failed by a chunk: why, the
// rule, and the chunk's frame.
func flowReason(why, frame string) string {
	return fmt.Sprintf("%s; a producer MUST NOT send a chunk beyond its credits or out of sequence, the host fails the stream (§5.12); the frame: %s",
		why, quoteLimited(frame, 200))
}

// streamEnd judges a stream's answer, after the chunks that came before it.
func (r *runner) streamEnd(s *session, name, key string, chunks chan streamChunk, f *flow, a answer) (Case, error) {
	for {
		select {
		case c := <-chunks: // read before the answer: frames are in order
			if bad := f.take(c); bad != "" {
				return Case{Name: name, Status: Fail, Reason: flowReason(bad, c.frame)}, nil
			}
			continue
		default:
		}
		break
	}
	if s.flooded(key) {
		return Case{Name: name, Status: Fail, Reason: fmt.Sprintf("more than %d chunks were sent unacknowledged, far beyond the window of %d (§5.12)", streamQueue, streamWindow)}, nil
	}
	items := plural(int(f.sent), "chunk", "chunks")
	if a.m.Error != nil {
		reason := fmt.Sprintf("answered error %d after %s: %s", a.m.Error.Code, items, quoteLimited(a.m.Error.Message, 80))
		if denied := r.denied.scan(a.m.Error.Message); len(denied) > 0 {
			return Case{Name: name, Status: Fail, Reason: reason + "; " + strings.Join(denied, "; ")}, nil
		}
		return Case{Name: name, Status: Pass, Reason: reason}, nil
	}
	if !isObject(a.m.Result) {
		return Case{Name: name, Status: Fail, Reason: fmt.Sprintf("after %s, the result is %s, not an object {\"output\"?: ...} (§5.12)", items, quote(a.m.Result))}, nil
	}
	if f.sent == 0 {
		return Case{Name: name, Status: Pass, Reason: "answered with a result and no chunk: its output is the stream's one item"}, nil
	}
	return Case{Name: name, Status: Pass, Reason: fmt.Sprintf("streamed %s within the window of %d, then the result", items, streamWindow)}, nil
}

// streamLate cancels a stream not ended by the call timeout.
func (r *runner) streamLate(s *session, name, key string, answers chan answer, f *flow) (Case, error) {
	_ = s.notify(wire.MethodCancel, wire.CancelParams{ID: json.RawMessage(key)})
	_, ok, err := s.await(r.ctx, answers, time.Now().Add(cancelWait))
	if err != nil {
		return Case{}, err
	}
	if ok {
		return Case{Name: name, Status: Pass, Reason: fmt.Sprintf("still streaming after %s at %v, cancelled, and answered", plural(int(f.sent), "chunk", "chunks"), r.opts.CallTimeout)}, nil
	}
	s.abandon(key)
	if s.gone() {
		return Case{Name: name, Status: Fail, Reason: fmt.Sprintf("no end within %v, nor %v after $/cancel%s", r.opts.CallTimeout, cancelWait, s.why())}, nil
	}
	return Case{Name: name, Status: Warn, Reason: fmt.Sprintf("no end within %v, nor %v after $/cancel: a cancelled stream SHOULD be answered with %d (§5.8, §5.12)",
		r.opts.CallTimeout, cancelWait, protocol.CodeRequestCancelled)}, nil
}
