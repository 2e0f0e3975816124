package protocol

import (
	"encoding/json"
	"fmt"
)

// Error codes. The -32700..-32600 range is JSON-RPC 2.0's; the rest are
// extkernel's, documented in docs/protocol.md.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeRequestCancelled answers a request cancelled by $/cancel.
	CodeRequestCancelled = -32800
	// CodeNotInitialized answers any request other than initialize sent
	// before the handshake completed.
	CodeNotInitialized = -32002
	// CodeUnsupportedVersion answers initialize when the protocol versions
	// are incompatible.
	CodeUnsupportedVersion = -32003
	// CodeUnknownTarget answers a call naming a point, slot, provider or
	// action the plugin did not declare.
	CodeUnknownTarget = -32004
	// CodeNotAuthorized answers a capability/call (protocol 1.1) naming a
	// capability the caller's manifest does not require.
	CodeNotAuthorized = -32005
	// CodeNotAvailable answers a capability/call whose requirement is
	// optional and unsatisfied, or whose provider is down.
	CodeNotAvailable = -32006
	// CodeDepthExceeded answers a capability/call that would nest deeper
	// than the host's call depth bound; the message shows the chain.
	CodeDepthExceeded = -32007
	// CodeStaleGeneration answers a capability/call from a plugin that is
	// not a member of the host's current generation.
	CodeStaleGeneration = -32008
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

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code int, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}
