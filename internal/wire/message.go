package wire

import (
	"encoding/json"
	"fmt"

	"github.com/extkernel/extkernel/protocol"
)

// JSONRPCVersion is the value of every message's "jsonrpc" member.
const JSONRPCVersion = "2.0"

// Message is one JSON-RPC 2.0 message: a request (ID and Method), a
// notification (Method, no ID) or a response (ID and Result or Error).
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *protocol.Error `json:"error,omitempty"`
}

// IsRequest reports whether m is a request (has a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && len(m.ID) > 0 }

// IsNotification reports whether m is a notification (a method, no id).
func (m *Message) IsNotification() bool { return m.Method != "" && len(m.ID) == 0 }

// IsResponse reports whether m is a response (an id, no method).
func (m *Message) IsResponse() bool { return m.Method == "" && len(m.ID) > 0 }

// NullID is the id of an error response to a request whose id could not be
// read (a malformed frame), as JSON-RPC 2.0 prescribes.
var NullID = json.RawMessage("null")

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
func NewErrorResponse(id json.RawMessage, e *protocol.Error) *Message {
	if len(id) == 0 {
		id = NullID
	}
	return &Message{JSONRPC: JSONRPCVersion, ID: id, Error: e}
}
