package sdk

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/extkernel/extkernel/internal/wire"
)

// TestTraceparent: a handler sees the traceparent the host sent with its
// request (and nothing for an invalid one), and its calls, streaming ones
// included, carry it to the host unless it set its own with
// WithTraceparent.
func TestTraceparent(t *testing.T) {
	const hostSpan = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	const ownSpan = "00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01"
	p := New("tracer", "1.0.0")
	p.Provider("seen", "", func(ctx context.Context, _ json.RawMessage) (any, error) {
		return Traceparent(ctx), nil
	})
	p.Provider("call", "", func(ctx context.Context, in json.RawMessage) (any, error) {
		if string(in) == `"own"` {
			ctx = WithTraceparent(ctx, ownSpan)
		}
		return p.Call(ctx, "host.log", "write", nil)
	})
	p.Provider("stream", "", func(ctx context.Context, in json.RawMessage) (any, error) {
		if string(in) == `"own"` {
			ctx = WithTraceparent(ctx, ownSpan)
		}
		n := 0
		for _, err := range p.CallStream(ctx, "host.log", "tail", nil) {
			if err != nil {
				return nil, err
			}
			n++
		}
		return n, nil
	})
	h := serve(t, p)
	h.initialize(1)

	h.call(2, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "seen", Traceparent: hostSpan})
	h.result(2, `{"output":"`+hostSpan+`"}`)
	h.call(3, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "seen", Traceparent: "00-zz"})
	h.result(3, `{"output":""}`)

	for i, tt := range []struct{ input, want string }{{`"inherit"`, hostSpan}, {`"own"`, ownSpan}} {
		id := 4 + i
		h.call(id, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "call", Input: json.RawMessage(tt.input), Traceparent: hostSpan})
		m := h.recv()
		var cp wire.CapabilityCallParams
		if m.Method != wire.MethodCapabilityCall || json.Unmarshal(m.Params, &cp) != nil || cp.Traceparent != tt.want {
			t.Fatalf("%s: got %s, want a capability/call with traceparent %s", tt.input, frame(m), tt.want)
		}
		h.send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: m.ID, Result: json.RawMessage(`{"output":1}`)})
		h.result(id, `{"output":1}`)
	}
	for i, tt := range []struct{ input, want string }{{`"inherit"`, hostSpan}, {`"own"`, ownSpan}} {
		id := 6 + i
		h.call(id, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "stream", Input: json.RawMessage(tt.input), Traceparent: hostSpan})
		m := h.recv()
		var cp wire.CapabilityCallParams
		if m.Method != wire.MethodCapabilityCall || json.Unmarshal(m.Params, &cp) != nil || cp.Stream == nil || cp.Traceparent != tt.want {
			t.Fatalf("stream %s: got %s, want a streaming capability/call with traceparent %s", tt.input, frame(m), tt.want)
		}
		h.send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: m.ID, Result: json.RawMessage(`{}`)})
		h.result(id, `{"output":0}`)
	}
}
