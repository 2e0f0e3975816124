package sdktest

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// The stub host answers a plugin's capability/call that asks for a stream
// with a stream (protocol.md §5.12), so that the plugin is checked as a
// consumer too: the stub host holds itself to the plugin's window and
// waits for its acks.
const (
	// feedMax bounds the chunks fed to one stream: the window plus one,
	// at most this many.
	feedMax = 33
	// feedAckWait is how long the stub host waits for an ack with the
	// window full before it ends the stream.
	feedAckWait = time.Second
)

// feedTable routes the plugin's acks and cancels to the streams the stub
// host feeds, by the plugin's request id. It is a leaf lock.
type feedTable struct {
	mu      sync.Mutex
	acks    map[string]chan int64
	cancels map[string]chan struct{}
}

// startFeed answers the plugin's streaming call id (a required
// capability's, its window checked) with a stream in a goroutine the
// session waits for; the call is recorded as cb when the stream ends.
func (s *session) startFeed(id json.RawMessage, window int, cb callback) {
	key := idKey(id)
	acks, cancelled := make(chan int64, feedMax), make(chan struct{})
	s.feeds.mu.Lock()
	if s.feeds.acks == nil {
		s.feeds.acks, s.feeds.cancels = map[string]chan int64{}, map[string]chan struct{}{}
	}
	s.feeds.acks[key], s.feeds.cancels[key] = acks, cancelled
	s.feeds.mu.Unlock()
	s.wg.Add(1) // from the reader, itself counted: never racing Wait at zero
	go func() {
		defer s.wg.Done()
		cb.unacked = s.feed(id, window, acks, cancelled)
		s.feeds.mu.Lock()
		delete(s.feeds.acks, key)
		delete(s.feeds.cancels, key)
		s.feeds.mu.Unlock()
		s.cbMu.Lock()
		s.cbCalls = append(s.cbCalls, cb)
		s.cbMu.Unlock()
	}()
}

// feed sends the stream of the plugin's call id within its window, waiting
// for its acks, and ends it: {} after its chunks, -32800 when the plugin
// cancels it. It returns why the plugin failed a consumer's SHOULD (no ack
// with its window full), or "".
func (s *session) feed(id json.RawMessage, window int, acks chan int64, cancelled chan struct{}) string {
	n := min(window+1, feedMax)
	var sent, acked int
	for sent < n {
		if sent < acked+window {
			sent++
			raw, _ := json.Marshal(wire.StreamChunkParams{ID: id, Seq: int64(sent), Data: json.RawMessage(fmt.Sprint(sent))})
			_ = s.write(&wire.Message{JSONRPC: wire.JSONRPCVersion, Method: wire.MethodStreamChunk, Params: raw})
			continue
		}
		t := time.NewTimer(feedAckWait)
		select {
		case a := <-acks:
			acked = max(acked, min(int(a), sent)) // one above the chunks sent counts as them
		case <-cancelled:
			t.Stop()
			_ = s.write(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: id,
				Error: &protocol.Error{Code: protocol.CodeRequestCancelled, Message: "capability/call cancelled: cancelled by the plugin"}})
			return ""
		case <-t.C:
			_ = s.write(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: id, Result: json.RawMessage(`{}`)})
			return fmt.Sprintf("its window of %d chunks was full and no ack came within %v; a consumer SHOULD acknowledge at the latest after half its window (§5.12)",
				window, feedAckWait)
		case <-s.stdoutDone:
			t.Stop()
			return ""
		}
		t.Stop()
	}
	_ = s.write(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: id, Result: json.RawMessage(`{}`)})
	return ""
}

// feedNotification routes the plugin's $/stream/ack and $/cancel for a
// stream the stub host feeds; it reports whether m was one.
func (s *session) feedNotification(m *wire.Message) bool {
	var p struct {
		ID  json.RawMessage `json:"id"`
		Seq int64           `json:"seq"`
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return false
	}
	s.feeds.mu.Lock()
	defer s.feeds.mu.Unlock()
	key := idKey(p.ID)
	switch m.Method {
	case wire.MethodStreamAck:
		if ch, ok := s.feeds.acks[key]; ok {
			select {
			case ch <- p.Seq:
			default: // more acks than chunks fed: the later ones say no more
			}
			return true
		}
	case wire.MethodCancel:
		if ch, ok := s.feeds.cancels[key]; ok {
			close(ch)
			delete(s.feeds.cancels, key)
			return true
		}
	}
	return false
}
