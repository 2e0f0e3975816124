package sdk

import (
	"context"
	"fmt"

	"github.com/extkernel/extkernel/internal/wire"
)

// Progress reports progress on the host request whose handler's context
// ctx is or derives from, with a $/progress notification (protocol 1.3,
// docs/protocol.md §5.15): message says what the handler is doing ("" for
// nothing) and fraction how much of the work is done, in [0, 1]; a
// negative fraction sends none. A host of protocol 1.3 or later extends
// the request's timeout with each progress, up to its maximum call
// duration, so a handler that runs longer than the host's timeout
// reports progress more often than that timeout. To a host that does not
// support FeatureProgress (one before 1.3, which would ignore it) nothing
// is sent, and Progress returns nil. It returns an error wrapping ErrNotServing when ctx is no handler's
// context of a serving plugin, and an error for a fraction above 1 (or
// NaN) or a failed write.
func Progress(ctx context.Context, message string, fraction float64) error {
	h, ok := ctx.Value(parentKey{}).(*handlerCtx)
	if !ok {
		return fmt.Errorf("progress: the context is no handler's: %w", ErrNotServing)
	}
	p := wire.ProgressParams{ID: h.id, Message: message}
	switch {
	case fraction >= 0 && fraction <= 1:
		p.Fraction = &fraction
	case !(fraction < 0):
		return fmt.Errorf("progress: fraction %v is not in [0, 1]", fraction)
	}
	s := h.s
	s.handshake.RLock()
	defer s.handshake.RUnlock()
	if s.abort.Err() != nil {
		return fmt.Errorf("progress: %w", ErrNotServing)
	}
	if !s.host().Has(wire.HasProgress) {
		return nil // a host without it would ignore it
	}
	m, err := wire.NewNotification(wire.MethodProgress, p)
	if err != nil {
		return fmt.Errorf("progress: %w", err)
	}
	if err := s.fw.WriteMessage(m); err != nil {
		s.cancelAbort(fmt.Errorf("write to host: %w", err))
		return fmt.Errorf("progress: %w", err)
	}
	return nil
}
