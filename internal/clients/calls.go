package clients

import (
	"context"
	"encoding/json"

	"github.com/extkernel/extkernel/sidecar"
)

// OnCall is the function serving the plugins' capability/call requests
// (sidecar.Options.OnCall).
type OnCall = func(context.Context, sidecar.Call) (json.RawMessage, error)

// Server carries package kernel's OnCall through generation.ClientOptions
// to every sidecar a build starts, without a name in generation's exported
// API (a host that builds generations itself serves no calls: routing a
// call is the kernel's, under its leases). It is embedded like Holder; its
// zero value serves none.
type Server struct {
	onCall      OnCall
	onCallAsync OnCallAsync
}

// OnCallAsync is the function offered each capability/call first, to
// serve it without a goroutine (sidecar.Options.OnCallAsync).
type OnCallAsync = func(context.Context, sidecar.Call, func(json.RawMessage, error)) bool

// server returns s; promoted through the embedding, it makes the
// embedding type satisfy serving.
func (s *Server) server() *Server { return s }

// serving is satisfied by a pointer to any struct that embeds a Server.
type serving interface{ server() *Server }

// SetOnCall makes x carry fn and async (nil: none).
func SetOnCall(x serving, fn OnCall, async OnCallAsync) {
	x.server().onCall, x.server().onCallAsync = fn, async
}

// OnCallOf returns the functions x carries, or nil.
func OnCallOf(x serving) (OnCall, OnCallAsync) { return x.server().onCall, x.server().onCallAsync }
