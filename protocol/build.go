package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// NullID is the id of an error response to a request whose id could not be
// read (a malformed frame), as JSON-RPC 2.0 prescribes.
var NullID = json.RawMessage("null")

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code int, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// NewRequest returns a request with the given id, method and params, which
// are marshalled to JSON (nil params are omitted).
func NewRequest(id json.RawMessage, method string, params any) (*Message, error) {
	raw, err := marshalParams(method, params)
	if err != nil {
		return nil, err
	}
	return &Message{JSONRPC: JSONRPCVersion, ID: id, Method: method, Params: raw}, nil
}

// NewNotification returns a notification with the given method and params,
// which are marshalled to JSON (nil params are omitted).
func NewNotification(method string, params any) (*Message, error) {
	raw, err := marshalParams(method, params)
	if err != nil {
		return nil, err
	}
	return &Message{JSONRPC: JSONRPCVersion, Method: method, Params: raw}, nil
}

// NewResult returns a successful response to the request with the given id.
// result is marshalled to JSON; a nil result is sent as null.
func NewResult(id json.RawMessage, result any) (*Message, error) {
	raw, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("marshal result: %w", err)
	}
	return &Message{JSONRPC: JSONRPCVersion, ID: id, Result: raw}, nil
}

// NewErrorResponse returns an error response to the request with the given
// id. An empty id is replaced by NullID.
func NewErrorResponse(id json.RawMessage, e *Error) *Message {
	if len(id) == 0 {
		id = NullID
	}
	return &Message{JSONRPC: JSONRPCVersion, ID: id, Error: e}
}

func marshalParams(method string, params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("marshal %s params: %w", method, err)
	}
	return raw, nil
}

// AppendRequest appends the frame of a request to dst, without the
// newline: the bytes WriteMessage writes (before its newline) for the
// Message with JSONRPCVersion, id, method and params. params must be one
// JSON value as json.Marshal returns it (compact, no raw newline), or
// empty to omit it (an empty method is omitted too, as by WriteMessage).
// Nothing is validated: the caller marshalled params.
func AppendRequest(dst []byte, id int64, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	if method != "" {
		dst = append(dst, `,"method":`...)
		dst = appendString(dst, method)
	}
	if len(params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendResult appends the frame of a successful response to dst, without
// the newline: {"jsonrpc":"2.0","id":ID,"result":RESULT}, the bytes
// WriteMessage writes (before its newline) for the same Message. id is a
// JSON value as a decoded Message holds it (an object or array id is
// compacted); result must be one JSON value as json.Marshal or json.Compact
// returns it (compact, no raw newline), and is appended as is.
func AppendResult(dst []byte, id json.RawMessage, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// appendID appends id, compacted when it is an object or an array (the
// only ids that can hold insignificant space once decoded); an empty id is
// null.
func appendID(dst []byte, id json.RawMessage) []byte {
	if len(id) == 0 {
		return append(dst, NullID...)
	}
	if id[0] != '{' && id[0] != '[' {
		return append(dst, id...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, id); err != nil {
		return append(dst, NullID...) // not JSON: cannot be an id read from a frame
	}
	return append(dst, buf.Bytes()...)
}

// appendString appends s as a JSON string, as json.Encoder with HTML
// escaping off writes it.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s) // a string always encodes
			return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
