package protocol

import (
	"encoding/json"
	"fmt"
)

// Error codes: those a handler chooses for its failure and those a caller
// tells apart. -32601 and -32602 are JSON-RPC 2.0's; the rest are
// extkernel's. docs/protocol.md §7 documents every code of the protocol by
// number, these and the ones only the host's and the SDK's machinery emit
// (parse error, invalid request, internal error, not initialized,
// unsupported version, depth exceeded, stale generation), which have no Go
// constants here: a host or a plugin compares their numbers.
const (
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	// CodeRequestCancelled answers a request cancelled by $/cancel.
	CodeRequestCancelled = -32800
	// CodeUnknownTarget answers a call naming a point, slot, provider or
	// action the plugin did not declare.
	CodeUnknownTarget = -32004
	// CodeNotAuthorized answers a capability/call (protocol 1.1) naming a
	// capability the caller's manifest does not require.
	CodeNotAuthorized = -32005
	// CodeNotAvailable answers a capability/call whose requirement is
	// optional and unsatisfied, or whose provider is down.
	CodeNotAvailable = -32006
	// CodePluginError is a handler's own failure.
	CodePluginError = -32000
)

// Error is a JSON-RPC error object. It implements error so handler errors
// keep their code across the wire.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error returns "message (code N)".
func (e *Error) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }
