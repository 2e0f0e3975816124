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

// DecodeChunkFrame reports whether line is a $/stream/chunk notification
// in the layout the Go SDK writes ({"jsonrpc":"2.0","method":
// "$/stream/chunk","params":{"id":ID,"seq":N,"data":"..."}}, nothing
// else) with valid params, and then decodes its params into p, which must
// be zero, in one scan of the data: p's raw fields alias line. Any other
// frame, a chunk of another layout included, is left to DecodeMessage.
func DecodeChunkFrame(line []byte, p *StreamChunkParams) bool {
	rest, ok := bytes.CutPrefix(line, []byte(chunkFramePrefix))
	if !ok || len(rest) < 2 || rest[len(rest)-1] != '}' {
		return false
	}
	params := rest[:len(rest)-1]
	// The layout of decodeChunkValid, each string scanned (validated)
	// once: the id's, then the data's, which must end the params.
	body, ok := bytes.CutPrefix(params, []byte(`{"id":`))
	if !ok {
		return false
	}
	if len(body) > 0 && body[0] == '"' && jsonscan.StringEnd(body, 0) < 0 {
		return false
	}
	var q StreamChunkParams
	if !decodeChunkLayout(params, &q) {
		return false
	}
	start := len(params) - len(q.Data) - 1 // the data's closing brace follows it
	if jsonscan.StringEnd(params, start) != len(params)-1 {
		return false
	}
	*p = q
	return true
}

// decodeChunkValid decodes params, valid JSON, if they have the layout
// the SDKs write with string data, and reports whether they had.
func decodeChunkValid(params []byte, p *StreamChunkParams) bool {
	return decodeChunkCut(params, p, true)
}

// decodeChunkLayout is decodeChunkValid for params not known to be
// valid: it cuts the layout, taking the data to run from its opening
// quote to the byte before the closing brace, without looking into it
// (the caller scans it). The id, when a string, has no backslash.
func decodeChunkLayout(params []byte, p *StreamChunkParams) bool {
	return decodeChunkCut(params, p, false)
}

// decodeChunkCut cuts the layout of decodeChunkValid; with valid, params
// are valid JSON and the data's end is found by its closing quote.
func decodeChunkCut(params []byte, p *StreamChunkParams, valid bool) bool {
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
	// if the closing brace follows at once. Without valid, the caller
	// checks that it does.
	end := len(data) - 2
	if valid {
		end = closingQuote(data)
	}
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
