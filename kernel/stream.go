package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/sidecar"
)

// streamOpened, if set (by tests only, before the kernel starts), sees
// every stream the kernel opens to a provider: StreamProvider's, and each
// one relayed to a plugin that asked for a stream.
var streamOpened func(*sidecar.Stream)

// StreamProvider calls the provider with the namespaced id
// ("plugin/<name>/<ref>") asking for its answer as a stream (protocol 1.1,
// docs/protocol.md §5.12) and returns the chunks as a sequence: each one
// with a nil error, in order. A chunk is valid until the loop body
// returns: its memory then holds a later chunk (a stream reuses the
// memory of its window rather than allocate per chunk), so a consumer
// that keeps one copies it (bytes.Clone). A failure ends the sequence
// with one (nil, error) pair: a *PluginError (wrapping the plugin's error answer,
// its crash, at once, sidecar.ErrFlowControl, ErrPluginDown or the end of ctx), an
// error wrapping ErrUnknownTarget for an unknown id, an *InputError for
// input config.Config.ValidateProviderInput refuses, ErrNotStarted or ErrClosed.
// A normal end ends the sequence without an error. A provider that does
// not stream (any plugin that ignores the request's stream member, every
// 1.0 plugin among them) answers as to CallProvider: its output is then
// the sequence's one chunk.
//
// Each range over the sequence calls the provider once, with the semantics of
// CallProvider: a lease on the current generation held until the range ends, so
// a reload waits for the stream (up to config.Config.DrainTimeout), and the
// provider deadline (config.Config.Deadlines) bounding the whole stream, as ctx
// does. Breaking out of the range (or ctx ending) cancels the request
// ($/cancel), which the provider sees as the failure of its next send. Flow
// control is credit-based: the provider may send at most
// config.Config.StreamWindow chunks beyond the last one the host acknowledged
// (and, of protocol 1.2, at most its byte window of data, stream_window_bytes),
// and the host acknowledges as the range consumes, so a slow consumer holds the
// provider back and the host never holds more than the window of chunks, nor
// more than the byte window of their data (or the one chunk larger than it).
func (k *Kernel) StreamProvider(ctx context.Context, id string, input json.RawMessage) iter.Seq2[json.RawMessage, error] {
	return func(yield func(json.RawMessage, error) bool) {
		ctx := ctx // each range over the stream is a dispatch of its own
		if dctx, end := k.dispatching(ctx, contribution.KindProvider, id); end != nil {
			ctx = dctx
			var failed error // the stream's outcome
			defer func() { end(failed) }()
			inner := yield
			yield = func(data json.RawMessage, err error) bool {
				if err != nil {
					failed = err
				}
				return inner(data, err)
			}
		}
		l, err := k.acquire()
		if err != nil {
			yield(nil, err)
			return
		}
		defer l.release()
		s, perr, sp, err := k.openStream(ctx, l, id, input)
		if err != nil {
			yield(nil, err)
			return
		}
		defer s.Close()
		for {
			data, err := s.Next()
			switch {
			case errors.Is(err, io.EOF):
				sp.end(nil)
				return
			case err != nil:
				perr.Err = err
				sp.end(perr)
				yield(nil, perr)
				return
			}
			if !yield(data, nil) {
				sp.end(nil) // the consumer had enough: not the plugin's failure
				return
			}
		}
	}
}

// openStream opens the stream of provider id in l: it returns the stream,
// the *PluginError its failures are reported in (Err to be set), and the
// span counting and observing the whole stream as one call, which the
// caller ends with the stream's outcome.
func (k *Kernel) openStream(ctx context.Context, l *live, id string, input json.RawMessage) (*sidecar.Stream, *PluginError, *callSpan, error) {
	c, found := l.gen.Registry().Provider(id)
	if !found {
		return nil, nil, nil, fmt.Errorf("%s %q: %w in generation %d", contribution.KindProvider, id, ErrUnknownTarget, l.gen.Number())
	}
	if k.config().ValidateProviderInput {
		if err := k.checkInput(l, c, input); err != nil {
			return nil, nil, nil, err
		}
	}
	m := l.gen.Member(c.Source.Plugin)
	perr := &PluginError{Plugin: c.Source.Plugin, Kind: contribution.KindProvider, Key: id, Required: m.Required}
	sp := beginCall(ctx, l.root(m.Package.Name).counters(), k.config().Observer,
		observe.CallInfo{Plugin: c.Source.Plugin, Kind: contribution.KindProvider, Key: id, Generation: l.gen.Number()})
	cfg := k.config()
	sctx := dispatchContext(sp.ctx, l, m, cfg.Deadlines.Provider)
	cl, release, err := l.use(sctx, m.Package.Name, func() string { return "stream of provider " + id + " by host" })
	if err != nil {
		perr.Err = err
		sp.end(perr)
		return nil, nil, nil, perr
	}
	p := c.Payload.(contribution.Provider)
	s, err := cl.OpenStream(sctx, p.Ref, input, sidecar.StreamOptions{Window: cfg.StreamWindow})
	release() // an open stream keeps the plugin busy on its own (sidecar.Client.Busy)
	if err != nil {
		perr.Err = err
		sp.end(perr)
		return nil, nil, nil, perr
	}
	if streamOpened != nil {
		streamOpened(s)
	}
	return s, perr, &sp, nil
}

// relayStream serves the call c, which asked for a stream, from the
// provider plugin cl's provider (params): it opens the provider's stream
// with the caller's window and passes each chunk on to the caller as it
// comes, and each ack of the caller on to the provider, so that the
// provider is never more than the window ahead of the caller, end to end.
// What the kernel holds between them is bounded in bytes, whatever the
// window (up to 1024 chunks of up to 4 MiB): per stream, the provider's
// byte window (its Limits.StreamWindowBytes, config key
// stream_window_bytes) of chunks received and not passed on yet, or the
// one chunk larger than it, and the one chunk Send is passing on; per
// calling plugin, its queue, at most its Limits.QueueBytes (queue_bytes)
// for all its streams and calls, for whose room Send waits.
// TestRelayedStreamBounds measures the first (sidecar.Stream.Peak).
// The stream's end answers the call: nil for the normal end, else the
// error (calleeError). ctx is the call's: the caller's $/cancel, its crash
// or the end of its parent cancel the provider's stream.
func (k *Kernel) relayStream(ctx context.Context, cl *sidecar.Client, params wire.ProviderInvokeParams, provider string,
	key capability.Key, c sidecar.Call) error {
	s, err := cl.OpenStream(ctx, params.Ref, params.Input, sidecar.StreamOptions{Window: c.Stream.Window(), ManualAck: true})
	if err != nil {
		return calleeError(err, provider, key, c)
	}
	defer s.Close()
	if streamOpened != nil {
		streamOpened(s)
	}
	c.Stream.OnAck(s.Ack)
	for {
		data, err := s.Next()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return calleeError(err, provider, key, c)
		}
		if err := c.Stream.Send(ctx, data); err != nil {
			return err
		}
	}
}
