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
