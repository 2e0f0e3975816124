// Package protocol is the shared vocabulary of extkernel's public APIs for
// the plugin protocol: the names the host packages and the Go SDK (package
// sdk) use in their signatures and errors. It holds the protocol Version
// and *VersionError, the error codes (Code*) and the wire error *Error, the
// types of the initialize handshake (InitializeParams, InitializeResult and
// the declarations they carry), an interceptor's InterceptResult with its
// Decision* constants. It depends on the standard
// library only.
//
// The wire mechanics are not part of it: the JSON-RPC 2.0 envelope, the
// method names, the params and results of the other calls, the default
// timeouts and the framing (one JSON message per line on the plugin's stdin
// and stdout) live in the module's internal package internal/wire, beside
// the measured shortcuts of the call path. docs/protocol.md is the
// specification a plugin author in any language implements from;
// docs/protocol.schema.json is its machine-readable method table
// (direction, kind, JSON Schemas of params and result, error codes,
// timeouts), which internal/wire's schema tests hold to the constants and
// types of both packages, in both directions.
//
// # Errors
//
// Errors that cross the wire carry a code and a message (type Error); a
// handler builds one as &Error{Code: ..., Message: ...} (a plugin written
// with package sdk: sdk.Errorf). The constants Code* are the codes a
// handler chooses and a caller tells apart; docs/protocol.md §7 lists every
// code by number, also those only the host's and the SDK's machinery emit,
// which have no constant here. A *VersionError says which side of an
// incompatible pair to upgrade.
package protocol
