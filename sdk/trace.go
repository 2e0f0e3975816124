package sdk

import (
	"context"

	"github.com/extkernel/extkernel/internal/wire"
)

// traceparentKey carries a W3C traceparent in a context.
type traceparentKey struct{}

// Traceparent returns the W3C Trace Context traceparent that ctx carries
// (docs/protocol.md §5.13), or "". In a handler's context (and any context
// derived from it) it is the one the host sent with the request, when it
// sent a valid one: the span of the host's call, which the plugin's own
// spans take as their parent so that they join the host's trace. The
// SDK sends it on with the calls the handler makes (Plugin.Call), unless
// WithTraceparent replaced it.
func Traceparent(ctx context.Context) string {
	tp, _ := ctx.Value(traceparentKey{}).(string)
	return tp
}

// WithTraceparent returns a copy of ctx carrying traceparent, e.g. that of
// a span the plugin started, so that Plugin.Call sends it with its calls.
// A value that is not a valid version-00 traceparent is ignored.
func WithTraceparent(ctx context.Context, traceparent string) context.Context {
	if !wire.ValidTraceparent(traceparent) {
		return ctx
	}
	return context.WithValue(ctx, traceparentKey{}, traceparent)
}

// traced records on a handler's context the traceparent its request
// carried, when the host sent a valid one.
func traced(ctx context.Context, tp string) {
	if tp == "" {
		return
	}
	if h, ok := ctx.(*handlerCtx); ok && wire.ValidTraceparent(tp) {
		h.traceparent = tp
	}
}
