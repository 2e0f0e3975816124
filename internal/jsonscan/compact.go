package jsonscan

import (
	"bytes"
	"encoding/json"
)

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

// Valid reports whether raw is one JSON value, with or without space
// around it, as json.Valid does, in one pass (a long plain string at
// memory speed, see skipPlain).
func Valid(raw []byte) bool {
	end, _ := scanValue(raw, skipSpace(raw, 0))
	return end >= 0 && skipSpace(raw, end) == len(raw)
}

// StringEnd returns the end (one past the closing quote) of the valid JSON
// string starting at b[i], or -1 when b[i:] does not start with one.
func StringEnd(b []byte, i int) int {
	end, _ := scanString(b, i)
	return end
}
