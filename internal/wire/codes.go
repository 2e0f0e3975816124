package wire

// Error codes only the protocol's machinery emits: the host's (package
// sidecar, the kernel's call routing) and the Go SDK's. Plugin and host code
// has no reason to branch on them differently from the message, so they are
// not in package protocol with the codes a handler chooses or a caller
// tells apart; docs/protocol.md §7 documents every code by number, and the
// schema tests hold docs/protocol.schema.json's error_codes to the Code*
// constants of both packages.
const (
	// CodeParseError answers a frame that is not valid JSON (id null).
	CodeParseError = -32700
	// CodeInvalidRequest answers a JSON value that is not a valid request,
	// a second initialize, or an id already in flight.
	CodeInvalidRequest = -32600
	// CodeInternalError answers a request whose receiver failed
	// unexpectedly: a handler panicked or returned an output that cannot be
	// encoded, a host handler returned an error that is not a
	// *protocol.Error, a callee broke a stream's flow control, or a plugin
	// has too many capability/call requests in flight.
	CodeInternalError = -32603
	// CodeNotInitialized answers any request other than initialize sent
	// before the handshake completed.
	CodeNotInitialized = -32002
	// CodeUnsupportedVersion answers initialize when the protocol versions
	// are incompatible.
	CodeUnsupportedVersion = -32003
	// CodeDepthExceeded answers a capability/call that would nest deeper
	// than the host's call depth bound; the message shows the chain.
	CodeDepthExceeded = -32007
	// CodeStaleGeneration answers a capability/call from a plugin that is
	// not a member of the host's current generation.
	CodeStaleGeneration = -32008
)
