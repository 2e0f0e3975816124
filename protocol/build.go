package protocol

import (
	"encoding/json"
	"fmt"
)

// NullID is the id of an error response to a request whose id could not be
// read (a malformed frame), as JSON-RPC 2.0 prescribes.
var NullID = json.RawMessage("null")

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code int, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}

// NewNotification returns a notification with the given method and params,
// which are marshalled to JSON (nil params are omitted).
func NewNotification(method string, params any) (*Message, error) {
	m := &Message{JSONRPC: JSONRPCVersion, Method: method}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("marshal %s params: %w", method, err)
		}
		m.Params = raw
	}
	return m, nil
}

// NewErrorResponse returns an error response to the request with the given
// id. An empty id is replaced by NullID.
func NewErrorResponse(id json.RawMessage, e *Error) *Message {
	if len(id) == 0 {
		id = NullID
	}
	return &Message{JSONRPC: JSONRPCVersion, ID: id, Error: e}
}
