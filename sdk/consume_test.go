package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// TestCallStreamCredits checks that a stream the plugin consumes judges
// each chunk against the acks it sent (docs/protocol.md §5.12): a host
// that sends chunk window+1 with nothing acknowledged breaks the flow
// control, even though the range took a chunk and the queue had room for
// it (before, the violation was found only once the queue overflowed,
// up to half a window later, or never for a range that keeps up).
func TestCallStreamCredits(t *testing.T) {
	took, proceed := make(chan struct{}), make(chan struct{})
	p := New("consumer", "1.0.0")
	p.Provider("tail", "", func(ctx context.Context, _ json.RawMessage) (any, error) {
		n := 0
		for _, err := range p.CallStream(ctx, "host.log", "tail", nil) {
			if err != nil {
				return nil, err
			}
			if n++; n == 1 {
				took <- struct{}{}
				<-proceed
			}
		}
		return n, nil
	})
	h := serve(t, p)
	h.initialize(1)
	h.call(2, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "tail"})
	m := h.recv()
	var cp wire.CapabilityCallParams
	if m.Method != wire.MethodCapabilityCall || json.Unmarshal(m.Params, &cp) != nil || cp.Stream == nil {
		t.Fatalf("got %s, want a streaming capability/call", frame(m))
	}
	window := cp.Stream.Window
	chunk := func(seq int) {
		params := fmt.Sprintf(`{"id":%s,"seq":%d,"data":%d}`, m.ID, seq, seq)
		h.send(&wire.Message{JSONRPC: wire.JSONRPCVersion, Method: wire.MethodStreamChunk, Params: json.RawMessage(params)})
	}
	chunk(1)
	<-took // taken, not acknowledged: the ack comes after half the window
	for seq := 2; seq <= window+1; seq++ {
		chunk(seq)
	}
	h.call(3, wire.MethodPing, nil) // answered once the chunks before it were read
	h.result(3, `{}`)
	close(proceed)
	for {
		r := h.recv()
		if r.Method == wire.MethodCancel {
			continue // the consumer cancels the broken stream
		}
		want := fmt.Sprintf("chunk %d is beyond the window: 0 acknowledged, window %d", window+1, window)
		if string(r.ID) != "2" || r.Error == nil || r.Error.Code != wire.CodeInternalError || !strings.Contains(r.Error.Message, want) {
			t.Fatalf("got %s, want provider/invoke 2 answered -32603 with %q", frame(r), want)
		}
		break
	}
}

// TestNoCallAfterItsParentAnswered checks a call its handler writes after
// the host's $/cancel of the handler's request was answered (the handler
// past its context check when the cancel came, as under load): it is not
// written, for the host would read a call naming a parent it no longer has
// in flight (§5.11), and it fails with context.Canceled.
func TestNoCallAfterItsParentAnswered(t *testing.T) {
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	beforeCallWrite = func() { once.Do(func() { close(reached); <-release }) }
	t.Cleanup(func() { beforeCallWrite = nil })
	p := New("tester", "1.0.0")
	errc := make(chan error, 1)
	p.Provider("tail", "", func(ctx context.Context, _ json.RawMessage) (any, error) {
		for _, err := range p.CallStream(ctx, "storage.kv", "tail", nil) {
			errc <- err
			return nil, err
		}
		errc <- nil
		return 0, nil
	})
	h := serve(t, p)
	h.initialize(1)
	h.call(5, wire.MethodProviderInvoke, invoke("tail"))
	wait(t, (<-chan struct{})(reached), "the handler's call")
	h.cancelCall(5)
	h.error(5, protocol.CodeRequestCancelled, "")
	close(release)
	if err := wait(t, (<-chan error)(errc), "the call's end"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the call ended with %v, want context.Canceled", err)
	}
	h.call(6, wire.MethodPing, nil)
	h.response(6) // the next frame: no call was written
}
