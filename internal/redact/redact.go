// Package redact applies a redaction function (config.Config.Redactor,
// package kernel/config) to JSON, aware of its syntax: a secret inside a
// JSON string is found in the text the string stands for, so that an
// escape (`\u002d` for "-") does not hide it, and object keys are
// redacted as values are. The sidecar redacts error data, declarations
// and log fields with it; the admin server a notify's data.
//
// The function itself is the caller's: this package decides nothing about
// what is secret, only how a JSON value is walked.
package redact

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"unicode/utf8"
)

// Func redacts one string. Nil is not allowed: a caller that has nothing
// to redact does not call this package.
type Func func(string) string

// JSON redacts the strings and keys of a JSON value, returning raw itself
// when nothing changed. A value that does not decode is redacted as text
// (and then returned as a JSON string when that changed it). A value that
// changed is re-encoded by encoding/json: keys sorted, HTML characters
// escaped.
//
// A valid value is first scanned string by string, without decoding it
// into a tree: when r changes none of its strings, raw is returned from
// there, which is what decoding would have found, without holding the
// tree (a plugin's data is up to 4 MiB, and its tree many times that).
// Only a value holding text that r changes, or one that is not valid
// JSON, is decoded.
func (r Func) JSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	if json.Valid(raw) && !r.changesAString(raw) {
		return raw
	}
	return r.decoded(raw)
}

// decoded is JSON without the scan: it decodes raw into a tree, redacts
// it, and encodes it again when that changed a string.
func (r Func) decoded(raw json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		if s := r(string(raw)); s != string(raw) {
			q, _ := json.Marshal(s)
			return q
		}
		return raw
	}
	var changed bool
	v = r.Value(v, &changed)
	if !changed {
		return raw
	}
	out, _ := json.Marshal(v) // decoded JSON always encodes
	return out
}

// changesAString reports whether r changes any string of the valid JSON
// value raw, object keys included, in the text the string stands for.
func (r Func) changesAString(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		// A string literal starts at i; in valid JSON a quote outside a
		// string starts one, and an escape's next byte is never its end.
		end, escaped := i+1, false
		for ; raw[end] != '"'; end++ {
			if raw[end] == '\\' {
				end++
				escaped = true
			}
		}
		lit := raw[i : end+1]
		i = end
		var s string
		if body := lit[1 : len(lit)-1]; !escaped && utf8.Valid(body) {
			s = string(body)
		} else if json.Unmarshal(lit, &s) != nil { // as decoding reads it: invalid UTF-8 is U+FFFD
			return true // cannot happen in valid JSON: let decoding decide
		}
		if r(s) != s {
			return true
		}
	}
	return false
}

// Value returns v with every string in it redacted, object keys included,
// as encoding/json decodes it. It sets *changed when a string changed.
func (r Func) Value(v any, changed *bool) any {
	switch v := v.(type) {
	case string:
		return r.Changed(v, changed)
	case map[string]any:
		return r.Object(v, changed)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = r.Value(e, changed)
		}
		return out
	}
	return v
}

// Changed redacts s and sets *changed when that changed it.
func (r Func) Changed(s string, changed *bool) string {
	out := r(s)
	if out != s {
		*changed = true
	}
	return out
}

// Object redacts the keys and values of m into a new map (nil for nil).
// Two keys that redact to the same text keep both values: the later ones
// in key order get a "#n" suffix. It sets *changed when a string changed.
func (r Func) Object(m map[string]any, changed *bool) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		rk := r.Changed(k, changed)
		for i := 2; ; i++ {
			if _, dup := out[rk]; !dup {
				break
			}
			rk = r(k) + "#" + strconv.Itoa(i)
		}
		out[rk] = r.Value(m[k], changed)
	}
	return out
}
