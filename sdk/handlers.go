package sdk

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/extkernel/extkernel/internal/jsonscan"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// intercept runs the interceptor at the requested point and checks its
// decision.
func (s *session) intercept(ctx context.Context, raw json.RawMessage) (any, error) {
	var params wire.InterceptParams
	if err := decodeParams(raw, &params); err != nil {
		return nil, err
	}
	traced(ctx, params.Traceparent)
	h, ok := s.reg.intercept[params.Point]
	if !ok {
		return nil, unknownTarget("point", params.Point, s.reg.intercept)
	}
	res, err := h(ctx, params.Point, params.Payload)
	if err != nil {
		return nil, err
	}
	if err := checkDecision(&res); err != nil {
		return nil, err
	}
	return res, nil
}

// checkDecision normalizes res (the zero value means continue) and rejects
// an unknown decision or a modify without a payload.
func checkDecision(res *protocol.InterceptResult) *protocol.Error {
	switch res.Decision {
	case "", protocol.DecisionContinue:
		*res = protocol.InterceptResult{Decision: protocol.DecisionContinue}
	case protocol.DecisionModify:
		if len(res.Payload) == 0 {
			why := "no payload"
			if res.Reason != "" {
				why = res.Reason
			}
			return Errorf(protocol.CodePluginError, "interceptor decided modify without a payload: %s", why)
		}
		if !json.Valid(res.Payload) {
			return Errorf(protocol.CodePluginError, "interceptor decided modify with a payload that is not JSON")
		}
		res.Reason = ""
	case protocol.DecisionDeny:
		res.Payload = nil
	default:
		return Errorf(protocol.CodePluginError, "interceptor returned unknown decision %q (want continue, modify or deny)", res.Decision)
	}
	return nil
}

// strategy runs the plugin's implementation of the requested slot.
func (s *session) strategy(ctx context.Context, raw json.RawMessage) (any, error) {
	var params wire.StrategyInvokeParams
	if err := decodeParams(raw, &params); err != nil {
		return nil, err
	}
	traced(ctx, params.Traceparent)
	h, ok := s.reg.strategy[params.Slot]
	if !ok {
		return nil, unknownTarget("slot", params.Slot, s.reg.strategy)
	}
	return output(h(ctx, params.Input))
}

// provider runs the requested provider.
func (s *session) provider(ctx context.Context, raw json.RawMessage) (any, error) {
	var params wire.ProviderInvokeParams
	if err := decodeParams(raw, &params); err != nil {
		return nil, err
	}
	traced(ctx, params.Traceparent)
	h, ok := s.reg.provider[params.Ref]
	if !ok {
		if sh, ok := s.reg.stream[params.Ref]; ok {
			return s.serveStream(ctx, &params, sh)
		}
		return nil, unknownTarget("provider", params.Ref, s.reg.providerRefs())
	}
	return output(h(ctx, params.Input))
}

// action runs the requested UI action with its context as input.
func (s *session) action(ctx context.Context, raw json.RawMessage) (any, error) {
	var params wire.ActionRunParams
	if err := decodeParams(raw, &params); err != nil {
		return nil, err
	}
	traced(ctx, params.Traceparent)
	h, ok := s.reg.action[params.ID]
	if !ok {
		return nil, unknownTarget("action", params.ID, s.reg.action)
	}
	return output(h(ctx, params.Context))
}

// output wraps a handler's value into the OutputResult it answers with,
// marshalled once into a pooled buffer: {"output":VALUE}, or {} for a nil
// value. A json.RawMessage value is validated and compacted as is (one
// pass, no HTML escaping); any other value is marshalled with json.Marshal.
func output(v any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	if v == nil {
		return emptyObject, nil
	}
	r := newResultJSON()
	r.buf.WriteString(`{"output":`)
	if raw, ok := v.(json.RawMessage); ok {
		if len(raw) == 0 {
			r.buf.WriteString("null") // what json.Marshal makes of it
		} else {
			var b []byte
			if b, err = jsonscan.AppendCompact(r.buf.AvailableBuffer(), raw); err != nil {
				err = fmt.Errorf("json.RawMessage: %w", err)
			}
			r.buf.Write(b)
		}
	} else {
		var b []byte
		if b, err = json.Marshal(v); err == nil {
			r.buf.Write(b)
		}
	}
	if err != nil {
		r.free()
		return nil, Errorf(wire.CodeInternalError, "marshal output: %v", err)
	}
	r.buf.WriteByte('}')
	return r, nil
}
