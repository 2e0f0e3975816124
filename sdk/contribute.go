package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/extkernel/extkernel/internal/jsonscan"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// Contribution describes a contribution of a host-declared kind beyond its
// kind and key (protocol 1.1, docs/protocol.md §4.2). The zero value
// declares the bare kind and key.
type Contribution struct {
	// Title is a human-readable label for the host's UI; "" for none.
	Title string
	// Priority orders the contributions of an ordered kind at one key
	// (higher first, within [-1000, 1000]); nil means the manifest's
	// runtime.priority.
	Priority *int
	// Data is the kind-specific payload the host reads (a tool's input
	// schema, say), marshalled to JSON by Contribute; nil sends none, and a
	// json.RawMessage is sent as it is.
	Data any
}

// Contribute registers a contribution of kind, a kind the host declares
// beyond the built-in ones (such as "tool"), at key, and h as its handler:
// the host's contribution/invoke of kind and key runs h with the input.
// The manifest's runtime.contributes must list key under kind. h may be
// nil for a contribution the host only reads; invoking it is then answered
// -32004 (unknown target).
//
// Contributions are declared only to a host speaking protocol 1.1 or later
// (docs/protocol.md §8): with a 1.0 host the plugin declares its other
// contributions alone and works as before. Contribute panics on an empty
// kind or key, a kind and key registered twice, or data that cannot be
// marshalled.
func (p *Plugin) Contribute(kind, key string, c Contribution, h HandlerFunc) {
	p.register("Contribute", func(r *registry) {
		mustName("Contribute", "kind", kind)
		mustName("Contribute", "key", key)
		k := contribKey{kind, key}
		if _, dup := r.contrib[k]; dup {
			panic(fmt.Sprintf("sdk: Contribute: duplicate %s %q", kind, key))
		}
		data, err := marshalData(c.Data)
		if err != nil {
			panic(fmt.Sprintf("sdk: Contribute: %s %q: marshal data: %v", kind, key, err))
		}
		r.contrib[k] = h
		r.decls.Contributions = append(r.decls.Contributions,
			protocol.ContributionDecl{Kind: kind, Key: key, Priority: c.Priority, Title: c.Title, Data: data})
	})
}

// contribKey is a contribution's kind and key.
type contribKey struct{ kind, key string }

// marshalData encodes a Contribution's Data: nil stays nil, a
// json.RawMessage is validated and kept.
func marshalData(v any) (json.RawMessage, error) {
	switch d := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if len(d) == 0 {
			return nil, nil
		}
		if !json.Valid(d) {
			return nil, fmt.Errorf("json.RawMessage is not valid JSON")
		}
		return d, nil
	}
	return json.Marshal(v)
}

// contribution runs the handler of the requested contribution.
func (s *session) contribution(ctx context.Context, raw json.RawMessage) (any, error) {
	var params wire.ContributionInvokeParams
	if err := decodeParams(raw, &params); err != nil {
		return nil, err
	}
	traced(ctx, params.Traceparent)
	h, ok := s.reg.contrib[contribKey{params.Kind, params.Key}]
	switch {
	case !ok:
		declared := make(map[string]bool, len(s.reg.contrib))
		for k := range s.reg.contrib {
			declared[k.kind+" "+k.key] = true
		}
		return nil, unknownTarget("contribution", params.Kind+" "+params.Key, declared)
	case h == nil:
		return nil, Errorf(protocol.CodeUnknownTarget, "%s %q has no handler: the host only reads it", params.Kind, params.Key)
	}
	return output(h(ctx, params.Input))
}

// appendContributions appends initialize's contributions member, as
// json.Marshal encodes it, for registry.result; ok is false when a Data is
// not valid JSON (Contribute refuses it, so only a hand-built registry has
// one).
func appendContributions(b []byte, ds []protocol.ContributionDecl) (_ []byte, ok bool) {
	if len(ds) == 0 {
		return b, true
	}
	b = append(b, `,"contributions":[`...)
	for i, d := range ds {
		b = appendSep(b, i)
		b = append(b, `{"kind":`...)
		b = jsonscan.AppendString(b, d.Kind)
		b = append(b, `,"key":`...)
		b = jsonscan.AppendString(b, d.Key)
		if d.Priority != nil {
			b = append(b, `,"priority":`...)
			b = strconv.AppendInt(b, int64(*d.Priority), 10)
		}
		if d.Title != "" {
			b = append(b, `,"title":`...)
			b = jsonscan.AppendString(b, d.Title)
		}
		if len(d.Data) > 0 {
			data, err := json.Marshal(d.Data)
			if err != nil {
				return b, false
			}
			b = append(b, `,"data":`...)
			b = append(b, data...)
		}
		b = append(b, '}')
	}
	return append(b, ']'), true
}
