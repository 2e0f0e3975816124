//go:build goexperiment.jsonv2

package wire

import jsonv2 "encoding/json/v2"

// With GOEXPERIMENT=jsonv2, the decoding benchmarks also run
// encoding/json/v2 on the same frames and types, with its default options
// (which, like the hand path, match names exactly and refuse duplicate
// names).
func init() {
	decoders = append(decoders, decoder{name: "json-v2", message: func(line []byte, m *Message) error {
		*m = Message{}
		return jsonv2.Unmarshal(line, m)
	}, value: func(data []byte, v any) error { return jsonv2.Unmarshal(data, v) }})
}
