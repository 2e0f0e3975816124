package wire

import (
	"encoding/json"
	"strconv"

	"github.com/extkernel/extkernel/internal/jsonscan"
	"github.com/extkernel/extkernel/protocol"
)

// Decode decodes data into v as json.Unmarshal does, in one pass for the
// params and results of the protocol's calls (InitializeParams,
// InitializeResult, InterceptParams, InterceptResult, StrategyInvokeParams,
// ProviderInvokeParams, ActionRunParams, OutputResult, CancelParams,
// CapabilityCallParams, StreamChunkParams, StreamAckParams):
// their json.RawMessage fields may then alias data, which the caller MUST
// NOT modify while v is in use (the fast path is taken only when v holds
// its zero value). The result and any error are json.Unmarshal's.
func Decode(data []byte, v any) error {
	if decodeFast(data, v) {
		return nil
	}
	return json.Unmarshal(data, v)
}

type field = jsonscan.Field

// knownStrings are the strings decoded without allocating, as the
// envelope's: the protocol's version and method names.
var knownStrings = []string{
	JSONRPCVersion, MethodIntercept, MethodStrategyInvoke, MethodProviderInvoke,
	MethodActionRun, MethodPing, MethodCancel, MethodLog, MethodNotify,
	MethodStreamChunk, MethodStreamAck,
}

// decodeFast tries the fast path for v, which it writes only on success.
func decodeFast(data []byte, v any) bool {
	fields := func(fs ...field) bool { return jsonscan.DecodeFields(data, knownStrings, fs) }
	switch p := v.(type) {
	case *OutputResult:
		return into(p, p.Output == nil, func(r *OutputResult) bool {
			return fields(field{Key: "output", Raw: &r.Output})
		})
	case *ProviderInvokeParams:
		return into(p, p.Ref == "" && p.Input == nil && p.Stream == nil && p.Traceparent == "", func(r *ProviderInvokeParams) bool {
			var stream json.RawMessage
			return fields(field{Key: "ref", Str: &r.Ref}, field{Key: "input", Raw: &r.Input}, field{Key: "stream", Raw: &stream},
				field{Key: "traceparent", Str: &r.Traceparent}) &&
				decodeStreamParams(stream, &r.Stream)
		})
	case *CapabilityCallParams:
		zero := p.Capability == "" && p.Method == "" && p.Input == nil && p.Parent == nil && p.Traceparent == "" && p.Stream == nil
		return into(p, zero, func(r *CapabilityCallParams) bool {
			var stream json.RawMessage
			return fields(field{Key: "capability", Str: &r.Capability}, field{Key: "method", Str: &r.Method},
				field{Key: "input", Raw: &r.Input}, field{Key: "parent", Raw: &r.Parent},
				field{Key: "traceparent", Str: &r.Traceparent}, field{Key: "stream", Raw: &stream}) &&
				decodeStreamParams(stream, &r.Stream)
		})
	case *StreamChunkParams:
		return into(p, p.ID == nil && p.Seq == 0 && p.Data == nil, func(r *StreamChunkParams) bool {
			var seq json.RawMessage
			return fields(field{Key: "id", Raw: &r.ID}, field{Key: "seq", Raw: &seq}, field{Key: "data", Raw: &r.Data}) &&
				decodeSeq(seq, &r.Seq)
		})
	case *StreamAckParams:
		return into(p, p.ID == nil && p.Seq == 0, func(r *StreamAckParams) bool {
			var seq json.RawMessage
			return fields(field{Key: "id", Raw: &r.ID}, field{Key: "seq", Raw: &seq}) && decodeSeq(seq, &r.Seq)
		})
	case *StrategyInvokeParams:
		return into(p, p.Slot == "" && p.Input == nil && p.Traceparent == "", func(r *StrategyInvokeParams) bool {
			return fields(field{Key: "slot", Str: &r.Slot}, field{Key: "input", Raw: &r.Input}, field{Key: "traceparent", Str: &r.Traceparent})
		})
	case *ActionRunParams:
		return into(p, p.ID == "" && p.Context == nil && p.Traceparent == "", func(r *ActionRunParams) bool {
			return fields(field{Key: "id", Str: &r.ID}, field{Key: "context", Raw: &r.Context}, field{Key: "traceparent", Str: &r.Traceparent})
		})
	case *InterceptParams:
		return into(p, p.Point == "" && p.Payload == nil && p.Traceparent == "", func(r *InterceptParams) bool {
			return fields(field{Key: "point", Str: &r.Point}, field{Key: "payload", Raw: &r.Payload}, field{Key: "traceparent", Str: &r.Traceparent})
		})
	case *protocol.InterceptResult:
		return into(p, p.Decision == "" && p.Payload == nil && p.Reason == "", func(r *protocol.InterceptResult) bool {
			return fields(field{Key: "decision", Str: &r.Decision}, field{Key: "payload", Raw: &r.Payload}, field{Key: "reason", Str: &r.Reason})
		})
	case *CancelParams:
		return into(p, p.ID == nil, func(r *CancelParams) bool { return fields(field{Key: "id", Raw: &r.ID}) })
	case *protocol.InitializeResult:
		zero := p.ProtocolVersion == "" && p.Name == "" && p.Version == "" && p.Provides == nil &&
			p.Interceptors == nil && p.Strategies == nil && p.Providers == nil && p.Actions == nil
		return into(p, zero, func(r *protocol.InitializeResult) bool { return decodeInitializeResult(data, r) })
	case *protocol.InitializeParams:
		zero := p.ProtocolVersion == "" && p.Host == (protocol.HostInfo{}) && p.Plugin == (protocol.PluginInfo{}) &&
			p.Config == nil && p.Session == nil
		return into(p, zero, func(r *protocol.InitializeParams) bool { return decodeInitializeParams(data, r) })
	}
	return false
}

// decodeStreamParams decodes the "stream" member of a request, if any,
// into *sp: {"window": N} and an optional "window_bytes" (protocol 1.2),
// with nothing else (anything else is json.Unmarshal's).
func decodeStreamParams(raw json.RawMessage, sp **StreamParams) bool {
	if raw == nil {
		return true
	}
	var w, wb *int
	if !jsonscan.DecodeFields(raw, knownStrings, []field{{Key: "window", Num: &w}, {Key: "window_bytes", Num: &wb}}) || w == nil {
		return false
	}
	*sp = &StreamParams{Window: *w}
	if wb != nil {
		(*sp).WindowBytes = int64(*wb)
	}
	return true
}

// decodeSeq decodes a chunk's or an ack's seq, digits only (anything else
// is json.Unmarshal's, which refuses a fraction and a value out of range,
// as ParseInt does).
func decodeSeq(raw json.RawMessage, seq *int64) bool {
	if len(raw) == 0 || len(raw) > 19 {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	*seq = n
	return err == nil
}

// into decodes a fresh T with decode and stores it in *p, when *p is zero
// (json.Unmarshal merges into a value already set, which the fast path
// does not) and decode succeeds.
func into[T any](p *T, zero bool, decode func(*T) bool) bool {
	if !zero {
		return false
	}
	var r T
	if !decode(&r) {
		return false
	}
	*p = r
	return true
}

// decodeInitializeParams decodes the params of initialize: in a fresh
// plugin process json.Unmarshal would first build its decoders for three
// struct types by reflection, which measured 0.08 ms of the 1.5 ms from
// exec to the answered handshake (BENCHMARKS.md, sidecar).
func decodeInitializeParams(data []byte, r *protocol.InitializeParams) bool {
	var host, plugin, session json.RawMessage
	return jsonscan.DecodeFields(data, knownStrings, []field{
		{Key: "protocol_version", Str: &r.ProtocolVersion},
		{Key: "host", Raw: &host},
		{Key: "plugin", Raw: &plugin},
		{Key: "config", Raw: &r.Config},
		{Key: "session", Raw: &session},
	}) &&
		(host == nil || jsonscan.DecodeFields(host, knownStrings, []field{{Key: "name", Str: &r.Host.Name}, {Key: "version", Str: &r.Host.Version}})) &&
		(plugin == nil || jsonscan.DecodeFields(plugin, knownStrings, []field{
			{Key: "name", Str: &r.Plugin.Name}, {Key: "version", Str: &r.Plugin.Version}, {Key: "data_dir", Str: &r.Plugin.DataDir},
		})) &&
		(session == nil || jsonscan.DecodeStringMap(session, &r.Session))
}

// decodeInitializeResult decodes a plugin's answer to initialize, which
// json.Unmarshal would decode by reflection over seven struct types in
// each host start.
func decodeInitializeResult(data []byte, r *protocol.InitializeResult) bool {
	var provides, interceptors, strategies, providers, actions json.RawMessage
	return jsonscan.DecodeFields(data, knownStrings, []field{
		{Key: "protocol_version", Str: &r.ProtocolVersion},
		{Key: "name", Str: &r.Name},
		{Key: "version", Str: &r.Version},
		{Key: "provides", Raw: &provides},
		{Key: "interceptors", Raw: &interceptors},
		{Key: "strategies", Raw: &strategies},
		{Key: "providers", Raw: &providers},
		{Key: "actions", Raw: &actions},
	}) &&
		jsonscan.DecodeList(provides, &r.Provides, func(d *protocol.CapabilityDecl) []field {
			return []field{{Key: "capability", Str: &d.Capability}, {Key: "version", Str: &d.Version}}
		}) &&
		jsonscan.DecodeList(interceptors, &r.Interceptors, func(d *protocol.InterceptorDecl) []field {
			return []field{{Key: "point", Str: &d.Point}, {Key: "priority", Num: &d.Priority}}
		}) &&
		jsonscan.DecodeList(strategies, &r.Strategies, func(d *protocol.StrategyDecl) []field {
			return []field{{Key: "slot", Str: &d.Slot}}
		}) &&
		jsonscan.DecodeList(providers, &r.Providers, func(d *protocol.ProviderDecl) []field {
			return []field{{Key: "ref", Str: &d.Ref}, {Key: "description", Str: &d.Description}, {Key: "schema", Raw: &d.Schema}}
		}) &&
		jsonscan.DecodeList(actions, &r.Actions, func(d *protocol.ActionDecl) []field {
			return []field{{Key: "id", Str: &d.ID}, {Key: "title", Str: &d.Title}, {Key: "placement", Str: &d.Placement}}
		})
}
