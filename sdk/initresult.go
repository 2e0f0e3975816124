package sdk

import (
	"encoding/json"
	"strconv"

	"github.com/extkernel/extkernel/protocol"
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
	b = appendJSONString(b, protocol.Version)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, name)
	b = append(b, `,"version":`...)
	b = appendJSONString(b, version)
	if len(r.provides) > 0 {
		b = append(b, `,"provides":[`...)
		for i, d := range r.provides {
			b = appendSep(b, i)
			b = append(b, `{"capability":`...)
			b = appendJSONString(b, d.Capability)
			b = append(b, `,"version":`...)
			b = appendJSONString(b, d.Version)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(r.decls.Interceptors) > 0 {
		b = append(b, `,"interceptors":[`...)
		for i, d := range r.decls.Interceptors {
			b = appendSep(b, i)
			b = append(b, `{"point":`...)
			b = appendJSONString(b, d.Point)
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
			b = appendJSONString(b, d.Slot)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(r.decls.Providers) > 0 {
		b = append(b, `,"providers":[`...)
		for i, d := range r.decls.Providers {
			b = appendSep(b, i)
			b = append(b, `{"ref":`...)
			b = appendJSONString(b, d.Ref)
			if d.Description != "" {
				b = append(b, `,"description":`...)
				b = appendJSONString(b, d.Description)
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
			b = appendJSONString(b, d.ID)
			b = append(b, `,"title":`...)
			b = appendJSONString(b, d.Title)
			if d.Placement != "" {
				b = append(b, `,"placement":`...)
				b = appendJSONString(b, d.Placement)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return encoded(append(b, '}'))
}

func appendSep(b []byte, i int) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	return b
}

// appendJSONString appends s as json.Marshal encodes a string. Printable
// ASCII other than the characters it escapes is appended as is; anything
// else goes through json.Marshal.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
