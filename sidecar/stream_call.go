package sidecar

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// CallStream is the host's sending end of the stream a plugin asked for
// in its capability/call (protocol 1.1, docs/protocol.md §5.12): Call.Stream
// carries it to Options.OnCall, which sends the chunks with Send and then
// returns, which answers the call and ends the stream (an output returned
// is one more chunk to the plugin, an error the stream's failed end).
//
// The plugin acknowledges what it consumed with $/stream/ack; Send never
// lets more than the window be unacknowledged, so the chunks the host has
// written to the plugin, or queued for it, are at most its window. Send is
// called by one goroutine at a time; OnAck before the first Send.
type CallStream struct {
	c           *Client
	id          json.RawMessage // the plugin's request id
	window      int64
	windowBytes int64         // the plugin's window_bytes (protocol 1.2), or 0
	credit      chan struct{} // an ack came (capacity 1)

	mu struct {
		sync.Mutex
		sent, acked int64
		unacked     fifo[int64] // the data sizes of the chunks sent beyond acked
		bytes       int64       // their sum
		onAck       func(seq int64)
	}
}

// newCallStream returns the sending end of the stream p asks for, or the
// -32602 answer to a window out of range.
func (c *Client) newCallStream(id json.RawMessage, p *wire.StreamParams) (*CallStream, *protocol.Error) {
	if p.Window < 1 || p.Window > wire.MaxStreamWindow {
		return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("capability/call: stream window %d is not between 1 and %d",
			p.Window, wire.MaxStreamWindow)}
	}
	if p.WindowBytes < 0 {
		return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("capability/call: stream window_bytes %d is negative", p.WindowBytes)}
	}
	return &CallStream{c: c, id: json.RawMessage(callKey(id)), window: int64(p.Window), windowBytes: p.WindowBytes,
		credit: make(chan struct{}, 1)}, nil
}

// Window returns the window the plugin asked for.
func (s *CallStream) Window() int { return int(s.window) }

// OnAck makes fn run with each ack that grants credit (seq above the last
// one, capped to the chunks sent), on the calling plugin's reading
// goroutine: it must not block. The kernel relaying a provider's stream
// passes each ack on to it (Stream.Ack).
func (s *CallStream) OnAck(fn func(seq int64)) {
	s.mu.Lock()
	s.mu.onAck = fn
	s.mu.Unlock()
}

// Send writes data (one JSON value, as a plugin's chunk carries it) as the
// next chunk, once the window allows: it blocks while window chunks are
// unacknowledged, or, when the plugin asked for a byte window (protocol
// 1.2), while data would take the unacknowledged chunk data past it (one
// chunk larger than the byte window goes alone); and while the plugin's
// queue holds its budget; until an ack, room, or the end of ctx (the
// call's context, which the plugin's $/cancel, its crash and the end of
// the call's parent cancel), whose cause it then returns. It fails with
// ErrClosed once the plugin's input is closed.
func (s *CallStream) Send(ctx context.Context, data json.RawMessage) error {
	n := int64(len(data))
	if data == nil {
		n = int64(len("null"))
	}
	for {
		s.mu.Lock()
		if s.mu.sent < s.mu.acked+s.window &&
			(s.windowBytes == 0 || s.mu.sent == s.mu.acked || s.mu.bytes+n <= s.windowBytes) {
			s.mu.sent++
			seq := s.mu.sent
			s.mu.unacked.push(n)
			s.mu.bytes += n
			s.mu.Unlock()
			return s.c.send(ctx, frameWait, 0, chunkFrame(s.id, seq, data))
		}
		s.mu.Unlock()
		select {
		case <-s.credit:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// ack records the plugin's ack of the chunks up to seq.
func (s *CallStream) ack(seq int64) {
	s.mu.Lock()
	seq = min(seq, s.mu.sent)
	if seq <= s.mu.acked {
		s.mu.Unlock()
		return
	}
	for ; s.mu.acked < seq; s.mu.acked++ {
		n, _ := s.mu.unacked.pop()
		s.mu.bytes -= n
	}
	fn := s.mu.onAck
	s.mu.Unlock()
	select {
	case s.credit <- struct{}{}:
	default:
	}
	if fn != nil {
		fn(seq)
	}
}

// chunkFrame returns the newline-terminated $/stream/chunk frame of chunk
// seq of the stream answering request id. data nil is null.
func chunkFrame(id json.RawMessage, seq int64, data json.RawMessage) []byte {
	if data == nil {
		data = json.RawMessage("null")
	}
	frame := make([]byte, 0, len(data)+len(id)+80)
	frame = append(frame, `{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":`...)
	frame = append(frame, id...)
	frame = append(frame, `,"seq":`...)
	frame = strconv.AppendInt(frame, seq, 10)
	frame = append(frame, `,"data":`...)
	frame = append(frame, data...)
	return append(frame, "}}\n"...)
}

// streamAck handles a $/stream/ack from the plugin for one of its calls
// (the reading goroutine); one for no stream in flight is ignored. It
// returns why an ack is malformed, if it is.
func (c *Client) streamAck(params json.RawMessage) error {
	var p wire.StreamAckParams
	if err := wire.Decode(params, &p); err != nil {
		return fmt.Errorf("%s params: %w", wire.MethodStreamAck, c.redact.err(err))
	}
	c.mu.Lock()
	rec := c.mu.inbound[callKey(p.ID)]
	c.mu.Unlock()
	if rec == nil || rec.stream == nil {
		c.log.Debug("ignoring an ack for no stream in flight", "id", c.opts.Redact(string(p.ID)))
		return nil
	}
	rec.stream.ack(p.Seq)
	return nil
}
