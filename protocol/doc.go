// Package protocol defines the wire protocol between the extkernel host and
// its plugin sidecars: JSON-RPC 2.0 messages, one per line, on the plugin's
// stdin (host to plugin) and stdout (plugin to host). docs/protocol.md is the
// specification a plugin author in any language implements from; this
// package is its Go form, shared by the host (package sidecar) and the Go SDK
// (package sdk). It depends on neither. docs/protocol.schema.json is the
// machine-readable method table (direction, kind, JSON Schemas of params and
// result, error codes, timeouts); schema_test.go holds it to the constants
// and types here, in both directions.
//
// The package holds the wire types, constants, method names, errors, the
// envelope and the framing. The measured shortcuts of the call path (a
// one-pass decoder of params and results, frames assembled by hand) are
// not part of it: they live in internal/wire and internal/jsonscan, and
// agree with encoding/json byte for byte or step aside for it.
//
// # Framing
//
// A frame is one JSON value encoded as UTF-8 without raw newlines, followed
// by "\n". A frame longer than the reader's limit (DefaultMaxFrame, 4 MiB,
// unless configured) is a protocol error; so is a line that is not a JSON-RPC
// 2.0 message, and the error quotes the offending bytes so that a plugin which
// prints a banner to stdout gets a clear message instead of a hang.
//
// # Concurrency
//
// A FrameReader is used by one goroutine. A FrameWriter serializes concurrent
// WriteMessage calls with its own mutex; each frame is written whole.
//
// # Errors
//
// Errors that cross the wire carry a code and a message (type Error); the
// codes are the constants Code*. Framing errors are *FrameError values.
package protocol
