package capability

import (
	"context"
	"encoding/json"
)

// Handler serves the calls plugins make to a capability the host
// provides (the Handlers of package kernel/config's Config;
// docs/protocol.md §5.11). ctx is the call's: it carries at most the
// caller's remaining deadline and is cancelled with the call (the caller's $/cancel, the end of the host request it serves,
// its crash). The output is sent to the caller as it is and must be valid
// JSON (nil for none). A *protocol.Error (errors.As) reaches the caller
// with its code and message; any other error is answered -32603 with its
// text; both are redacted. A handler runs on a goroutine of the calling
// plugin's connection, with no kernel lock held: it may call the kernel,
// including a dispatch to the caller itself.
type Handler func(ctx context.Context, call *Call) (json.RawMessage, error)

// Call is one call of a capability's method by a plugin, as a Handler
// receives it.
type Call struct {
	// Caller is the name of the calling plugin.
	Caller string
	// Capability is the capability called, one the caller's manifest
	// requires and the host provides.
	Capability Key
	// Method is the method called: an identifier (docs/protocol.md §4.5),
	// otherwise as the plugin sent it. The handler decides which methods
	// it serves, and answers another with protocol.CodeMethodNotFound.
	Method string
	// Input is the method's input as the plugin sent it (nil when absent).
	Input json.RawMessage
	// Generation is the number of the generation that serves the call:
	// the one that dispatched the request the call serves, else the
	// current one.
	Generation uint64
}
