package sidecar

import "github.com/extkernel/extkernel/protocol"

// redactValue returns v with redact applied to every string in it: v
// itself, and the values (not the keys) of nested objects and arrays as
// encoding/json decodes them. Other values are returned as they are. It
// sets *changed when redact changed a string.
func redactValue(v any, redact func(string) string, changed *bool) any {
	switch v := v.(type) {
	case string:
		r := redact(v)
		if r != v {
			*changed = true
		}
		return r
	case map[string]any:
		return redactMap(v, redact, changed)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactValue(e, redact, changed)
		}
		return out
	}
	return v
}

func redactMap(m map[string]any, redact func(string) string, changed *bool) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = redactValue(v, redact, changed)
	}
	return out
}

// redactFields returns a copy of fields with every string value redacted.
func redactFields(fields map[string]any, redact func(string) string) map[string]any {
	var changed bool
	return redactMap(fields, redact, &changed)
}

// redactFrameError returns a copy of fe whose quote of the offending line
// is redacted.
func redactFrameError(fe *protocol.FrameError, redact func(string) string) *protocol.FrameError {
	cp := *fe
	cp.Quote = redact(fe.Quote)
	return &cp
}

// redactError returns a copy of an error answer whose message is redacted.
func redactError(e *protocol.Error, redact func(string) string) *protocol.Error {
	cp := *e
	cp.Message = redact(e.Message)
	return &cp
}
