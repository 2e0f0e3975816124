package observe

import (
	"context"

	"github.com/extkernel/extkernel/internal/wire"
)

// WithTraceparent returns a copy of ctx carrying traceparent, a W3C Trace
// Context traceparent header value (version 00, e.g.
// "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"). The kernel
// sends it with every call it makes to a plugin under ctx (docs/protocol.md
// §5.13), so that the plugin's own spans join the host's trace; an
// Observer that starts a span for a call returns such a context. A value
// that is not a valid traceparent is ignored: ctx is returned unchanged.
func WithTraceparent(ctx context.Context, traceparent string) context.Context {
	return wire.WithTraceparent(ctx, traceparent)
}

// Traceparent returns the traceparent ctx carries, or "". In an
// Observer's Call for a plugin's capability/call (CallInfo.Caller set), it
// is the calling plugin's, when the plugin sent one. In a
// capability.Handler it is the one on the context that Call returned (an
// adapter's span for the call, whose parent is the plugin's), else the
// calling plugin's.
func Traceparent(ctx context.Context) string { return wire.Traceparent(ctx) }
