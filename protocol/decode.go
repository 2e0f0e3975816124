package protocol

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Fast decoding. Every frame is decoded twice per call (the envelope, then
// its params or result), and encoding/json scans each input twice (a
// validity pass, then the decoding pass, with reflection). The fast path
// below decodes the shapes that make up nearly all traffic in one pass
// with no reflection: an object whose members are all known, with exactly
// spelled keys, no duplicate, no null value and no escape in the strings
// it decodes. Anything else (including any invalid input) is decoded by
// encoding/json, so the result, and the error, are always encoding/json's.
// A hand-written scanner rather than a library: the fast path needs only
// these flat objects, the drop-in replacements (goccy/go-json,
// segmentio/encoding) would change decoding for every message and add a
// dependency to every plugin built on the SDK, and the tokenizers
// (jsonparser, gjson) do not validate what they skip.

// field is one member of a flat object the fast path decodes: a string
// (str), a raw JSON value (raw) or an integer (num, set to a new int).
type field struct {
	key string
	str *string
	raw *json.RawMessage
	num **int
}

// decodeFields decodes data, which must be one JSON object whose members
// are all among fields, each at most once, and reports whether it could.
// Raw values alias data. On false, the fields may have been written.
func decodeFields(data []byte, fields []field) bool {
	i, empty, ok := openList(data, '{', '}')
	if !ok || empty {
		return ok
	}
	var seen uint32
	for {
		key, vs, ve, ok := member(data, i)
		if !ok || data[vs] == 'n' { // null: encoding/json's rules per type
			return false
		}
		val := data[vs:ve]
		n := -1
		for j := range fields {
			if fields[j].key == string(key) {
				n = j
				break
			}
		}
		if n < 0 || seen&(1<<n) != 0 {
			return false
		}
		seen |= 1 << n
		if f := fields[n]; f.str != nil {
			s, ok := plainString(val)
			if !ok {
				return false
			}
			*f.str = s
		} else if f.num != nil {
			// Digits only: a fraction or exponent is json.Unmarshal's
			// to refuse, and out-of-range values Atoi's.
			if bytes.ContainsAny(val, ".eE") {
				return false
			}
			v, err := strconv.Atoi(string(val))
			if err != nil {
				return false
			}
			*f.num = &v
		} else {
			*f.raw = val[:len(val):len(val)]
		}
		var done bool
		if i, done, ok = nextItem(data, ve, '}'); !ok || done {
			return ok
		}
	}
}

// openList reads the opening byte of the object or array data must hold
// (with nothing after its end, which nextItem checks). It returns the
// index of the first item, or empty for {} or [].
func openList(data []byte, opening, closing byte) (i int, empty, ok bool) {
	i = skipSpace(data, 0)
	if i >= len(data) || data[i] != opening {
		return 0, false, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == closing {
		return 0, true, skipSpace(data, i+1) == len(data)
	}
	return i, false, true
}

// nextItem reads what follows an item of a list ending at end: a comma,
// then it returns the next item's index, or the closing byte, then done
// (ok only when nothing follows the list).
func nextItem(data []byte, end int, closing byte) (i int, done, ok bool) {
	i = skipSpace(data, end)
	if i >= len(data) {
		return 0, false, false
	}
	switch data[i] {
	case ',':
		return skipSpace(data, i+1), false, true
	case closing:
		return 0, true, skipSpace(data, i+1) == len(data)
	}
	return 0, false, false
}

// member reads the object member at data[i]: a key without escapes or
// non-ASCII bytes, a colon and a value, which spans data[vs:ve].
func member(data []byte, i int) (key []byte, vs, ve int, ok bool) {
	ke, special := scanString(data, i)
	if ke < 0 || special {
		return nil, 0, 0, false
	}
	j := skipSpace(data, ke)
	if j >= len(data) || data[j] != ':' {
		return nil, 0, 0, false
	}
	vs = skipSpace(data, j+1)
	if ve, _ = scanValue(data, vs); ve < 0 {
		return nil, 0, 0, false
	}
	return data[i+1 : ke-1], vs, ve, true
}

// plainString returns the string a JSON string without escapes or
// non-ASCII bytes holds; the protocol's method names and the JSON-RPC
// version are returned without allocating.
func plainString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", false
	}
	end, special := scanString(val, 0)
	if end != len(val) || special {
		return "", false
	}
	s := val[1 : len(val)-1]
	switch string(s) {
	case JSONRPCVersion:
		return JSONRPCVersion, true
	case MethodIntercept:
		return MethodIntercept, true
	case MethodStrategyInvoke:
		return MethodStrategyInvoke, true
	case MethodProviderInvoke:
		return MethodProviderInvoke, true
	case MethodActionRun:
		return MethodActionRun, true
	case MethodPing:
		return MethodPing, true
	case MethodCancel:
		return MethodCancel, true
	case MethodLog:
		return MethodLog, true
	case MethodNotify:
		return MethodNotify, true
	}
	return string(s), true
}

// decodeMessageFast decodes line into m (which must be zero) with one copy
// of line, which m's raw fields share, and reports whether it could.
func decodeMessageFast(line []byte, m *Message) bool {
	cp := bytes.Clone(line)
	return decodeFields(cp, []field{
		{key: "jsonrpc", str: &m.JSONRPC},
		{key: "id", raw: &m.ID},
		{key: "method", str: &m.Method},
		{key: "params", raw: &m.Params},
		{key: "result", raw: &m.Result},
	})
}

// Decode decodes data into v as json.Unmarshal does, faster for the
// params and results of the protocol's calls (InitializeParams,
// InitializeResult,
// InterceptParams, InterceptResult, StrategyInvokeParams,
// ProviderInvokeParams, ActionRunParams, OutputResult, CancelParams):
// their json.RawMessage
// fields may then alias data, which the caller must not modify while v is
// in use (the fast path is taken only when v holds its zero value). The
// result and any error are json.Unmarshal's.
func Decode(data []byte, v any) error {
	if decodeFast(data, v) {
		return nil
	}
	return json.Unmarshal(data, v)
}

// decodeFast tries the fast path for v, which it writes only on success.
func decodeFast(data []byte, v any) bool {
	fields := func(fs ...field) bool { return decodeFields(data, fs) }
	switch p := v.(type) {
	case *OutputResult:
		return into(p, p.Output == nil, func(r *OutputResult) bool {
			return fields(field{key: "output", raw: &r.Output})
		})
	case *ProviderInvokeParams:
		return into(p, p.Ref == "" && p.Input == nil, func(r *ProviderInvokeParams) bool {
			return fields(field{key: "ref", str: &r.Ref}, field{key: "input", raw: &r.Input})
		})
	case *StrategyInvokeParams:
		return into(p, p.Slot == "" && p.Input == nil, func(r *StrategyInvokeParams) bool {
			return fields(field{key: "slot", str: &r.Slot}, field{key: "input", raw: &r.Input})
		})
	case *ActionRunParams:
		return into(p, p.ID == "" && p.Context == nil, func(r *ActionRunParams) bool {
			return fields(field{key: "id", str: &r.ID}, field{key: "context", raw: &r.Context})
		})
	case *InterceptParams:
		return into(p, p.Point == "" && p.Payload == nil, func(r *InterceptParams) bool {
			return fields(field{key: "point", str: &r.Point}, field{key: "payload", raw: &r.Payload})
		})
	case *InterceptResult:
		return into(p, p.Decision == "" && p.Payload == nil && p.Reason == "", func(r *InterceptResult) bool {
			return fields(field{key: "decision", str: &r.Decision}, field{key: "payload", raw: &r.Payload}, field{key: "reason", str: &r.Reason})
		})
	case *CancelParams:
		return into(p, p.ID == nil, func(r *CancelParams) bool { return fields(field{key: "id", raw: &r.ID}) })
	case *InitializeResult:
		zero := p.ProtocolVersion == "" && p.Name == "" && p.Version == "" && p.Provides == nil &&
			p.Interceptors == nil && p.Strategies == nil && p.Providers == nil && p.Actions == nil
		return into(p, zero, func(r *InitializeResult) bool { return decodeInitializeResult(data, r) })
	case *InitializeParams:
		zero := p.ProtocolVersion == "" && p.Host == (HostInfo{}) && p.Plugin == (PluginInfo{}) && p.Config == nil && p.Session == nil
		return into(p, zero, func(r *InitializeParams) bool { return decodeInitializeParams(data, r) })
	}
	return false
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
func decodeInitializeParams(data []byte, r *InitializeParams) bool {
	var host, plugin, session json.RawMessage
	return decodeFields(data, []field{
		{key: "protocol_version", str: &r.ProtocolVersion},
		{key: "host", raw: &host},
		{key: "plugin", raw: &plugin},
		{key: "config", raw: &r.Config},
		{key: "session", raw: &session},
	}) &&
		(host == nil || decodeFields(host, []field{{key: "name", str: &r.Host.Name}, {key: "version", str: &r.Host.Version}})) &&
		(plugin == nil || decodeFields(plugin, []field{
			{key: "name", str: &r.Plugin.Name}, {key: "version", str: &r.Plugin.Version}, {key: "data_dir", str: &r.Plugin.DataDir},
		})) &&
		(session == nil || decodeStringMap(session, &r.Session))
}

// decodeInitializeResult decodes a plugin's answer to initialize, which
// json.Unmarshal would decode by reflection over seven struct types in
// each host start.
func decodeInitializeResult(data []byte, r *InitializeResult) bool {
	var provides, interceptors, strategies, providers, actions json.RawMessage
	return decodeFields(data, []field{
		{key: "protocol_version", str: &r.ProtocolVersion},
		{key: "name", str: &r.Name},
		{key: "version", str: &r.Version},
		{key: "provides", raw: &provides},
		{key: "interceptors", raw: &interceptors},
		{key: "strategies", raw: &strategies},
		{key: "providers", raw: &providers},
		{key: "actions", raw: &actions},
	}) &&
		decodeList(provides, &r.Provides, func(d *CapabilityDecl) []field {
			return []field{{key: "capability", str: &d.Capability}, {key: "version", str: &d.Version}}
		}) &&
		decodeList(interceptors, &r.Interceptors, func(d *InterceptorDecl) []field {
			return []field{{key: "point", str: &d.Point}, {key: "priority", num: &d.Priority}}
		}) &&
		decodeList(strategies, &r.Strategies, func(d *StrategyDecl) []field {
			return []field{{key: "slot", str: &d.Slot}}
		}) &&
		decodeList(providers, &r.Providers, func(d *ProviderDecl) []field {
			return []field{{key: "ref", str: &d.Ref}, {key: "description", str: &d.Description}, {key: "schema", raw: &d.Schema}}
		}) &&
		decodeList(actions, &r.Actions, func(d *ActionDecl) []field {
			return []field{{key: "id", str: &d.ID}, {key: "title", str: &d.Title}, {key: "placement", str: &d.Placement}}
		})
}

// decodeList decodes data, a JSON array of flat objects whose members
// fields lists, into a new slice (empty, not nil, for [], as
// json.Unmarshal makes it); nil data leaves list alone.
func decodeList[T any](data []byte, list *[]T, fields func(*T) []field) bool {
	if data == nil {
		return true
	}
	i, empty, ok := openList(data, '[', ']')
	if !ok {
		return false
	}
	*list = []T{}
	if empty {
		return true
	}
	for {
		end, _ := scanValue(data, i)
		var d T
		if end < 0 || !decodeFields(data[i:end], fields(&d)) {
			return false
		}
		*list = append(*list, d)
		var done bool
		if i, done, ok = nextItem(data, end, ']'); !ok || done {
			return ok
		}
	}
}

// decodeStringMap decodes an object of plain strings (see plainString)
// into a new map, a later duplicate key replacing the earlier as in
// json.Unmarshal, and reports whether it could.
func decodeStringMap(data []byte, m *map[string]string) bool {
	i, empty, ok := openList(data, '{', '}')
	if !ok {
		return false
	}
	*m = map[string]string{}
	if empty {
		return true
	}
	for {
		key, vs, ve, ok := member(data, i)
		if !ok {
			return false
		}
		v, ok := plainString(data[vs:ve])
		if !ok {
			return false
		}
		(*m)[string(key)] = v
		var done bool
		if i, done, ok = nextItem(data, ve, '}'); !ok || done {
			return ok
		}
	}
}

// AppendCompact appends the JSON value raw to dst as json.Compact would
// (insignificant space removed), in one pass when raw is valid and already
// compact. It returns json.Compact's error for invalid JSON.
func AppendCompact(dst, raw []byte) ([]byte, error) {
	if i := skipSpace(raw, 0); i == 0 && len(raw) > 0 {
		if end, spaced := scanValue(raw, 0); end == len(raw) && !spaced {
			return append(dst, raw...), nil
		}
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}
