package wire

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/extkernel/extkernel/internal/jsonscan"
)

// AppendRequest appends the frame of a request to dst, without the
// newline: the bytes FrameWriter.WriteMessage writes (before its
// newline) for the Message with JSONRPCVersion, id, method and params,
// except that method is encoded as json.Marshal encodes a string
// (jsonscan.AppendString: <, > and & escaped, which WriteMessage leaves
// as is; the protocol's method names hold none). params must be one JSON
// value as json.Marshal returns it (compact, no raw newline), or empty to
// omit it (an empty method is omitted too, as by WriteMessage). Nothing is
// validated: the caller marshalled params.
func AppendRequest(dst []byte, id int64, method string, params []byte) []byte {
	dst = appendRequestStart(dst, id, method)
	if len(params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// appendRequestStart appends a request's frame up to its params.
func appendRequestStart(dst []byte, id int64, method string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	if method != "" {
		dst = append(dst, `,"method":`...)
		dst = jsonscan.AppendString(dst, method)
	}
	return dst
}

// AppendDispatchRequest appends the frame of request id of method whose
// params are one of the params the host dispatches with (InterceptParams,
// StrategyInvokeParams, ProviderInvokeParams, ActionRunParams,
// ContributionInvokeParams, or a pointer to one), without the newline,
// and reports whether params was one of them (false: nothing appended,
// the caller marshals). The params are encoded as json.Marshal encodes
// them, members in the struct's order, but for their raw member (the
// input, payload or context), which is compacted (jsonscan.AppendCompact)
// and not HTML-escaped: the same JSON value. A raw member that is not
// valid JSON is the error, as it is json.Marshal's.
func AppendDispatchRequest(dst []byte, id int64, method string, params any) ([]byte, bool, error) {
	var (
		key, val, rawKey, trace string
		raw                     json.RawMessage
		stream                  *StreamParams
		kind                    string // ContributionInvokeParams' first member
		hasKind                 bool
	)
	switch p := params.(type) {
	case InterceptParams:
		key, val, rawKey, raw, trace = "point", p.Point, "payload", p.Payload, p.Traceparent
	case *InterceptParams:
		return appendDispatchPtr(dst, id, method, p)
	case StrategyInvokeParams:
		key, val, rawKey, raw, trace = "slot", p.Slot, "input", p.Input, p.Traceparent
	case *StrategyInvokeParams:
		return appendDispatchPtr(dst, id, method, p)
	case ProviderInvokeParams:
		key, val, rawKey, raw, trace, stream = "ref", p.Ref, "input", p.Input, p.Traceparent, p.Stream
	case *ProviderInvokeParams:
		return appendDispatchPtr(dst, id, method, p)
	case ActionRunParams:
		key, val, rawKey, raw, trace = "id", p.ID, "context", p.Context, p.Traceparent
	case *ActionRunParams:
		return appendDispatchPtr(dst, id, method, p)
	case ContributionInvokeParams:
		kind, key, val, rawKey, raw, trace, hasKind = p.Kind, "key", p.Key, "input", p.Input, p.Traceparent, true
	case *ContributionInvokeParams:
		return appendDispatchPtr(dst, id, method, p)
	default:
		return dst, false, nil
	}
	start := len(dst)
	// Room for the frame and its newline, unless a string needs escapes.
	dst = slices.Grow(dst, len(method)+len(kind)+len(val)+len(raw)+len(trace)+96)
	dst = append(appendRequestStart(dst, id, method), `,"params":{`...)
	if hasKind {
		dst = append(dst, `"kind":`...)
		dst = jsonscan.AppendString(dst, kind)
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	dst = append(dst, `":`...)
	dst = jsonscan.AppendString(dst, val)
	if len(raw) > 0 {
		dst = append(dst, `,"`...)
		dst = append(dst, rawKey...)
		dst = append(dst, `":`...)
		var err error
		if dst, err = jsonscan.AppendCompact(dst, raw); err != nil {
			return dst[:start], true, err
		}
	}
	if trace != "" {
		dst = append(dst, `,"traceparent":`...)
		dst = jsonscan.AppendString(dst, trace)
	}
	if stream != nil {
		dst = appendStreamParams(dst, stream)
	}
	return append(dst, "}}"...), true, nil
}

// appendDispatchPtr is AppendDispatchRequest for a pointer to params: a
// nil one is left to json.Marshal (null params).
func appendDispatchPtr[T any](dst []byte, id int64, method string, p *T) ([]byte, bool, error) {
	if p == nil {
		return dst, false, nil
	}
	return AppendDispatchRequest(dst, id, method, *p)
}

// AppendResult appends the frame of a successful response to dst, without
// the newline: {"jsonrpc":"2.0","id":ID,"result":RESULT}, the bytes
// WriteMessage writes (before its newline) for the same Message. id is a
// JSON value as a decoded Message holds it (an object or array id is
// compacted); result must be one JSON value as json.Marshal or json.Compact
// returns it (compact, no raw newline), and is appended as is.
func AppendResult(dst []byte, id json.RawMessage, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendOutputResult appends the frame of the successful response to
// request id whose result is {"output":OUT}, or {} when out is empty, to
// dst, without the newline: AppendResult's frame for that result, with out
// compacted (jsonscan.AppendCompact) straight into dst instead of into a
// result of its own, so an output costs one copy. It fails when out is not
// one JSON value. It appends at most OutputResultSize(id, out) bytes.
func AppendOutputResult(dst []byte, id, out json.RawMessage) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	if len(out) == 0 {
		return append(dst, `,"result":{}}`...), nil
	}
	dst, err := jsonscan.AppendCompact(append(dst, `,"result":{"output":`...), out)
	if err != nil {
		return dst, err
	}
	return append(dst, "}}"...), nil
}

// OutputResultSize is the most bytes AppendOutputResult appends for id
// and out.
func OutputResultSize(id, out json.RawMessage) int {
	return len(`{"jsonrpc":"2.0","id":,"result":{"output":}}`) + max(len(id), len(NullID)) + len(out)
}

// appendID appends id, compacted when it is an object or an array (the
// only ids that can hold insignificant space once decoded); an empty id is
// null.
func appendID(dst []byte, id json.RawMessage) []byte {
	if len(id) == 0 {
		return append(dst, NullID...)
	}
	if id[0] != '{' && id[0] != '[' {
		return append(dst, id...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, id); err != nil {
		return append(dst, NullID...) // not JSON: cannot be an id read from a frame
	}
	return append(dst, buf.Bytes()...)
}

// AppendCapabilityCall appends the frame of the capability/call request id
// (a JSON value, as "c1") with params p to dst, without the newline: the
// message FrameWriter.WriteMessage writes for the same request, but with
// the strings encoded as json.Marshal encodes them (jsonscan.AppendString)
// and p.Input and p.Parent appended as they are. p.Input must be compact
// JSON (as jsonscan.AppendCompact returns it) or empty to omit it; p.Parent
// a JSON value read from a frame, or empty.
func AppendCapabilityCall(dst []byte, id json.RawMessage, p *CapabilityCallParams) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"method":"`+MethodCapabilityCall+`","params":{"capability":`...)
	dst = jsonscan.AppendString(dst, p.Capability)
	dst = append(dst, `,"method":`...)
	dst = jsonscan.AppendString(dst, p.Method)
	if len(p.Input) > 0 {
		dst = append(dst, `,"input":`...)
		dst = append(dst, p.Input...)
	}
	if len(p.Parent) > 0 {
		dst = append(dst, `,"parent":`...)
		dst = appendID(dst, p.Parent)
	}
	if p.Traceparent != "" {
		dst = append(dst, `,"traceparent":`...)
		dst = jsonscan.AppendString(dst, p.Traceparent)
	}
	if p.Stream != nil {
		dst = appendStreamParams(dst, p.Stream)
	}
	return append(dst, "}}"...)
}

// appendStreamParams appends the "stream" member of a request, as
// json.Marshal would write sp.
func appendStreamParams(dst []byte, sp *StreamParams) []byte {
	dst = append(dst, `,"stream":{"window":`...)
	dst = strconv.AppendInt(dst, int64(sp.Window), 10)
	if sp.WindowBytes != 0 {
		dst = append(dst, `,"window_bytes":`...)
		dst = strconv.AppendInt(dst, sp.WindowBytes, 10)
	}
	return append(dst, '}')
}
