// Package wire is the fast codec of the protocol's call path, shared by
// the host (package sidecar) and the Go SDK (package sdk): one-pass
// decoding of the params and results of the protocol's calls (Decode) and
// frames assembled without a second encoding (AppendRequest,
// AppendResult). Package protocol keeps the wire types, the framing and
// the envelope; this package keeps the measured shortcuts, so they are not
// public API.
//
// Decode agrees with json.Unmarshal on every input (FuzzFastDecode checks
// it); the frames agree with protocol.FrameWriter's (TestAppendFrames).
// The benchmarks here compare the hand path with encoding/json, and, built
// with GOEXPERIMENT=jsonv2, with encoding/json/v2: the day v2 is the
// default and within about 1.3x of the hand path, this package's decoding
// and package internal/jsonscan can be deleted.
//
// # Concurrency
//
// Every function is safe for concurrent use; none keeps state.
package wire
