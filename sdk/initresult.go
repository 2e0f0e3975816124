package sdk

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/extkernel/extkernel/internal/wire"

	"github.com/extkernel/extkernel/internal/jsonscan"
)

// result returns the answer to initialize: initResult(name, version)
// encoded by hand, byte for byte as json.Marshal encodes it (field order,
// omitempty, HTML escaping, compacted schemas), ready for reply. In a fresh
// plugin process json.Marshal would first build its encoders for the six
// types by reflection, about a tenth of a millisecond of the plugin's cold
// start (BENCHMARKS.md, sidecar). When a provider's schema is not valid
// JSON it returns the protocol.InitializeResult itself, which reply then
// fails to marshal exactly as before.
func (r *registry) result(name, version string) any {
	b := make([]byte, 0, 512)
	b = append(b, `{"protocol_version":`...)
	b = jsonscan.AppendString(b, protocolVersion)
	b = append(b, `,"name":`...)
	b = jsonscan.AppendString(b, name)
	b = append(b, `,"version":`...)
	b = jsonscan.AppendString(b, version)
	if len(r.provides) > 0 {
		b = append(b, `,"provides":[`...)
		for i, d := range r.provides {
			b = appendSep(b, i)
			b = append(b, `{"capability":`...)
			b = jsonscan.AppendString(b, d.Capability)
			b = append(b, `,"version":`...)
			b = jsonscan.AppendString(b, d.Version)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(r.decls.Interceptors) > 0 {
		b = append(b, `,"interceptors":[`...)
		for i, d := range r.decls.Interceptors {
			b = appendSep(b, i)
			b = append(b, `{"point":`...)
			b = jsonscan.AppendString(b, d.Point)
			if d.Priority != nil {
				b = append(b, `,"priority":`...)
				b = strconv.AppendInt(b, int64(*d.Priority), 10)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(r.decls.Strategies) > 0 {
		b = append(b, `,"strategies":[`...)
		for i, d := range r.decls.Strategies {
			b = appendSep(b, i)
			b = append(b, `{"slot":`...)
			b = jsonscan.AppendString(b, d.Slot)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(r.decls.Providers) > 0 {
		b = append(b, `,"providers":[`...)
		for i, d := range r.decls.Providers {
			b = appendSep(b, i)
			b = append(b, `{"ref":`...)
			b = jsonscan.AppendString(b, d.Ref)
			if d.Description != "" {
				b = append(b, `,"description":`...)
				b = jsonscan.AppendString(b, d.Description)
			}
			if len(d.Schema) > 0 {
				// As json.Marshal encodes a json.RawMessage: validated,
				// compacted and HTML-escaped. Not on a cold start's path
				// unless a provider has a schema.
				schema, err := json.Marshal(d.Schema)
				if err != nil {
					return r.initResult(name, version)
				}
				b = append(b, `,"schema":`...)
				b = append(b, schema...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(r.decls.Actions) > 0 {
		b = append(b, `,"actions":[`...)
		for i, d := range r.decls.Actions {
			b = appendSep(b, i)
			b = append(b, `{"id":`...)
			b = jsonscan.AppendString(b, d.ID)
			b = append(b, `,"title":`...)
			b = jsonscan.AppendString(b, d.Title)
			if d.Placement != "" {
				b = append(b, `,"placement":`...)
				b = jsonscan.AppendString(b, d.Placement)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b, ok := appendContributions(b, r.decls.Contributions)
	if !ok {
		return r.initResult(name, version)
	}
	b = append(b, `,"features":`...)
	b = append(b, announcedJSON...)
	return encoded(append(b, '}'))
}

// announced are the features the SDK announces (docs/protocol.md §4.6):
// every one it implements. announcedJSON is their JSON array.
var (
	announced     = wire.AllFeatures.Names()
	announcedJSON = `["` + strings.Join(announced, `","`) + `"]`
)

func appendSep(b []byte, i int) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	return b
}
