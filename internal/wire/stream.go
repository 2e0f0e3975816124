package wire

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/extkernel/extkernel/internal/jsonscan"
)

// DecodeChunk decodes the params of a $/stream/chunk into p, which must
// be zero. params MUST be valid JSON, as DecodeMessage leaves a message's
// params: the chunks the SDKs write ({"id":ID,"seq":N,"data":"..."}, in
// that order, a string's data last) are then decoded without scanning
// their data a second time (the frame's decoding validated it), in one
// pass of bytes.IndexByte; any other params as Decode decodes them. p's
// raw fields alias params.
func DecodeChunk(params json.RawMessage, p *StreamChunkParams) error {
	if decodeChunkValid(params, p) {
		return nil
	}
	return Decode(params, p)
}

// chunkFramePrefix starts a chunk frame as the Go SDK writes it: the
// envelope's members in this order, params last.
const chunkFramePrefix = `{"jsonrpc":"2.0","method":"` + MethodStreamChunk + `","params":`

// CutChunkFrame reports whether line is a $/stream/chunk notification in
// the layout the Go SDK writes ({"jsonrpc":"2.0","method":
// "$/stream/chunk","params":{"id":ID,"seq":N,"data":"..."}}, nothing
// else), and then cuts its params into p, which must be zero: p's raw
// fields alias line. The id is validated, the data is not: it runs from
// its opening quote to its first quote that no backslash escapes, which
// the frame's closing braces follow, and it is a valid JSON string only if
// ValidChunkData says so; until then it MUST NOT be used (the frame, with
// data that is not, is not JSON). Any other frame, a chunk of another
// layout included, is left to DecodeMessage. Cutting costs a search of
// the data for quotes; the data's scan is left to its consumer.
func CutChunkFrame(line []byte, p *StreamChunkParams) bool {
	rest, ok := bytes.CutPrefix(line, []byte(chunkFramePrefix))
	if !ok || len(rest) < 2 || rest[len(rest)-1] != '}' {
		return false
	}
	params := rest[:len(rest)-1]
	body, ok := bytes.CutPrefix(params, []byte(`{"id":`))
	if !ok || (len(body) > 0 && body[0] == '"' && jsonscan.StringEnd(body, 0) < 0) {
		return false
	}
	return decodeChunkValid(params, p)
}

// ValidChunkData reports whether data, a chunk's data (as CutChunkFrame
// cuts it, or decoded), is one valid JSON value.
func ValidChunkData(data []byte) bool { return jsonscan.Valid(data) }

// decodeChunkValid decodes params, valid JSON, if they have the layout
// the SDKs write with string data, and reports whether they had.
func decodeChunkValid(params []byte, p *StreamChunkParams) bool {
	rest, ok := bytes.CutPrefix(params, []byte(`{"id":`))
	if !ok {
		return false
	}
	id, rest, ok := cutID(rest)
	if !ok {
		return false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"seq":`)); !ok {
		return false
	}
	n := 0
	for n < len(rest) && n < 19 && '0' <= rest[n] && rest[n] <= '9' {
		n++
	}
	seq, err := strconv.ParseInt(string(rest[:n]), 10, 64)
	if err != nil || (n > 1 && rest[0] == '0') {
		return false
	}
	data, ok := bytes.CutPrefix(rest[n:], []byte(`,"data":"`))
	if !ok {
		return false
	}
	// data starts with a valid string (params are valid JSON): it ends at
	// the first quote that no backslash escapes, and the params with it,
	// if the closing brace follows at once.
	end := closingQuote(data)
	if end < 0 || end+2 != len(data) || data[end+1] != '}' {
		return false
	}
	p.ID, p.Seq = id[:len(id):len(id)], seq
	start := len(params) - len(data) - 1 // the opening quote
	p.Data = params[start : start+end+2 : start+end+2]
	return true
}

// cutID cuts the id that b starts with: digits, or a string without
// escapes.
func cutID(b []byte) (id, rest []byte, ok bool) {
	if len(b) > 0 && b[0] == '"' {
		end := bytes.IndexByte(b[1:], '"')
		if end < 0 || bytes.IndexByte(b[1:end+1], '\\') >= 0 {
			return nil, nil, false
		}
		return b[:end+2], b[end+2:], true
	}
	n := 0
	for n < len(b) && '0' <= b[n] && b[n] <= '9' {
		n++
	}
	return b[:n], b[n:], n > 0 && (n == 1 || b[0] != '0')
}

// closingQuote returns the index in s, the rest of a valid JSON string
// after its opening quote, of its closing quote: the first one not
// escaped by an odd run of backslashes. It returns -1 when there is none.
func closingQuote(s []byte) int {
	for i := 0; i < len(s); {
		k := bytes.IndexByte(s[i:], '"')
		if k < 0 {
			return -1
		}
		q := i + k
		bs := 0
		for j := q - 1; j >= 0 && s[j] == '\\'; j-- {
			bs++
		}
		if bs%2 == 0 {
			return q
		}
		i = q + 1
	}
	return -1
}
