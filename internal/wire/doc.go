// Package wire holds the mechanics of the plugin protocol's wire, shared by
// the host (package sidecar, the kernel's call routing) and the Go SDK
// (package sdk): the JSON-RPC 2.0 envelope (Message, NewNotification,
// NewErrorResponse), the method names (Method*), the error codes only this
// machinery emits (CodeParseError, CodeInvalidRequest, CodeInternalError,
// CodeNotInitialized, CodeUnsupportedVersion, CodeDepthExceeded,
// CodeStaleGeneration), the params and results of the calls whose types
// are not in package protocol, the default timeouts, the framing
// (FrameReader, FrameWriter, DecodeMessage), and the fast codec of the call
// path: one-pass decoding of the params and results of the protocol's calls
// (Decode) and frames assembled without a second encoding (AppendRequest,
// AppendResult).
// Package protocol keeps the vocabulary the public APIs speak (the
// handshake types, InterceptResult, the error codes a handler chooses or a
// caller tells apart, and Error); docs/protocol.md is the specification,
// and the schema tests here hold docs/protocol.schema.json to the constants
// and types of both packages. None of this is public API: the protocol is
// what is specified, not these Go names.
//
// # Framing
//
// A frame is one JSON value encoded as UTF-8 without raw newlines, followed
// by "\n". A frame longer than the reader's limit (DefaultMaxFrame, 4 MiB,
// unless configured) is a protocol error; so is a line that is not a JSON-RPC
// 2.0 message, and the error (a *FrameError) quotes the offending bytes so
// that a plugin which prints a banner to stdout gets a clear message instead
// of a hang.
//
// # Fast paths
//
// Decode agrees with json.Unmarshal on every input (FuzzFastDecode checks
// it); the frames agree with FrameWriter's (TestAppendFrames); the
// envelope's one-pass decoding in DecodeMessage agrees with json.Unmarshal
// or steps aside for it (FuzzDecodeMessageFast). The benchmarks here compare
// the hand path with encoding/json, and, built with GOEXPERIMENT=jsonv2,
// with encoding/json/v2: the day v2 is the default and within about 1.3x of
// the hand path, this package's decoding and package internal/jsonscan can
// be deleted.
//
// # Concurrency
//
// A FrameReader is used by one goroutine. A FrameWriter serializes
// concurrent WriteMessage and WriteFrame calls with its own mutex; each frame
// is written whole. Every other function is safe for concurrent use; none
// keeps state.
package wire
