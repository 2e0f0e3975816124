package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// frame is where a request the kernel sends to a plugin comes from: the
// generation that dispatched it, the plugin it goes to and its depth in a
// chain of calls (0 for the host's own dispatch), and up, the frame of the
// caller whose call it serves (nil for the host's). Every request the
// kernel sends carries its frame in its context (frameKey), so that a
// capability/call naming the request as its parent is served by that
// generation, one level deeper.
type frame struct {
	live   *live
	plugin string
	depth  int
	up     *frame
	// stats are plugin's counters (statsTable), looked up by the first
	// call that counts through this frame: a member never called has none.
	stats atomic.Pointer[callStats]
}

// counters returns the counters of the frame's plugin, creating them on
// the first call.
func (f *frame) counters() *callStats {
	if s := f.stats.Load(); s != nil {
		return s
	}
	s := f.live.stats.of(f.plugin)
	f.stats.Store(s)
	return s
}

// frameKey finds a request's frame in its context.
type frameKey struct{}

// frameOf returns the frame ctx carries, or nil.
func frameOf(ctx context.Context) *frame {
	f, _ := ctx.Value(frameKey{}).(*frame)
	return f
}

// serveCall is every sidecar's OnCall: it serves one capability/call of
// the plugin of c.Client. It finds the generation that serves the call and
// leases it (callerFrame), asks routes.resolve where the call goes, bounds
// its depth, and calls the provider: the host's handler, or the providing
// plugin's provider under the caller's context (so the callee gets at most
// the caller's remaining deadline and is cancelled with it). Its errors
// are *protocol.Error values, but for a call whose context ended.
func (k *Kernel) serveCall(ctx context.Context, c sidecar.Call) (json.RawMessage, error) {
	from, rt, ref, err := k.routeCall(ctx, c)
	if err != nil {
		return nil, err
	}
	defer from.live.release()
	key := capability.Key(c.Capability)
	if rt.provider == capability.HostProvider {
		return k.callHost(ctx, from, rt.handler, c)
	}
	return k.callProvider(ctx, from, rt.provider, ref, key, c)
}

// callHost serves the call c made from from with the host's handler h,
// reported to the observer (as a call to capability.HostProvider: the
// handler runs under the context the observer returns, so its spans are
// children of the call's) and counted in no plugin's stats.
func (k *Kernel) callHost(ctx context.Context, from *frame, h capability.Handler, c sidecar.Call) (json.RawMessage, error) {
	key, gen := capability.Key(c.Capability), from.live.gen.Number()
	sp := beginCall(ctx, nil, k.config().Observer, observe.CallInfo{Plugin: capability.HostProvider, Caller: c.Client.Name(),
		Capability: c.Capability, Method: c.Method, Generation: gen})
	out, err := k.runHandler(sp.ctx, h, &capability.Call{Caller: c.Client.Name(), Capability: key, Method: c.Method, Input: c.Input,
		Generation: gen})
	sp.end(err)
	if err != nil {
		return nil, fmt.Errorf("host handler of %q failed: %w", string(key)+"."+c.Method, err)
	}
	return out, nil
}

// routeCall finds where the call c goes: the frame it is made from, with
// a lease on its generation that the caller releases (callerFrame), and
// the route and provider ref routes.resolve picks, the depth bounded. A
// refusal is its error, a *protocol.Error (logged at debug), with nothing
// leased.
func (k *Kernel) routeCall(ctx context.Context, c sidecar.Call) (*frame, route, string, error) {
	from, err := k.callerFrame(ctx, c)
	if err != nil {
		return nil, route{}, "", err
	}
	key := capability.Key(c.Capability)
	rt, ref, perr := from.live.routes.resolve(c.Client.Name(), key, c.Method)
	if perr == nil {
		perr = checkDepth(from, k.config().MaxCallDepth, key, c.Method)
	}
	if perr != nil {
		from.live.release()
		k.log.Debug("capability call refused", "plugin", c.Client.Name(), "capability", k.redactText(c.Capability),
			"method", k.redactText(c.Method), "code", perr.Code)
		return nil, route{}, "", perr
	}
	return from, rt, ref, nil
}

// serveCallAsync is every sidecar's OnCallAsync: on the caller's reading
// goroutine, it serves a call to another plugin's provider with no
// goroutine in between (sidecar.Client.InvokeAsync: the answer is relayed
// by the provider's reader), and refuses a call at once, as serveCall
// would. A call to a host handler, which may block, is left to serveCall
// on a call worker (false).
func (k *Kernel) serveCallAsync(ctx context.Context, c sidecar.Call, done func(json.RawMessage, error)) bool {
	from, rt, ref, err := k.routeCall(ctx, c)
	if err != nil {
		done(nil, err)
		return true
	}
	if rt.provider == capability.HostProvider {
		from.live.release()
		return false // routed again on the call worker: two lookups, no lock
	}
	key := capability.Key(c.Capability)
	cl, release, ok, err := from.live.tryUse(rt.provider)
	if !ok {
		from.live.release()
		return false // a lazy provider that does not run: started on the call worker
	}
	if err != nil {
		from.live.release()
		done(nil, notAvailable(c.Client.Name(), key, c.Method, fmt.Sprintf("provider %q: %v", rt.provider, err)))
		return true
	}
	ctx, params, sp := k.calleeRequest(ctx, from, rt.provider, ref, c)
	cl.InvokeAsync(ctx, wire.MethodProviderInvoke, params, func(out json.RawMessage, err error) {
		sp.end(err)
		release()
		from.live.release()
		if err != nil {
			done(nil, calleeError(err, rt.provider, key, c))
			return
		}
		done(out, nil)
	})
	return true
}

// runHandler runs a host handler, with what it audits published as
// events (withAudit). A handler that panics fails the call (-32603) and is
// logged with its stack, as net/http treats a panicking handler: a
// plugin's call must not take the host down.
func (k *Kernel) runHandler(ctx context.Context, h capability.Handler, call *capability.Call) (out json.RawMessage, err error) {
	defer func() {
		if r := recover(); r != nil {
			k.log.Error("host handler panicked", "capability", string(call.Capability), "method", k.redactText(call.Method),
				"caller", call.Caller, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			out, err = nil, &protocol.Error{Code: wire.CodeInternalError, Message: fmt.Sprintf("host handler of %q panicked", string(call.Capability)+"."+call.Method)}
		}
	}()
	return h(k.withAudit(ctx, call), call)
}

// callerFrame returns the frame the call is made from, with a lease on its
// generation that the caller must release. A call naming its parent is
// made from the parent request's frame, in the generation that dispatched
// it, even one retired since (the parent's own lease keeps it from
// draining); a parent the kernel did not send with a frame (a ping) counts
// as none. Any other call is made from the current generation, and only
// when the caller's process is the plugin's process in it: otherwise it is
// stale (-32008).
func (k *Kernel) callerFrame(ctx context.Context, c sidecar.Call) (*frame, error) {
	if f := frameOf(ctx); c.Parent && f != nil && f.plugin == c.Client.Name() {
		if f.live.acquireNested() {
			return f, nil
		}
		return nil, &protocol.Error{Code: wire.CodeStaleGeneration, Message: fmt.Sprintf("plugin %q: generation %d, which sent the request the call serves, has stopped",
			c.Client.Name(), f.live.gen.Number())}
	}
	l, err := k.acquire()
	if err != nil {
		return nil, &protocol.Error{Code: wire.CodeStaleGeneration, Message: fmt.Sprintf("plugin %q: no generation serves calls: %v", c.Client.Name(), err)}
	}
	if l.run.Client(c.Client.Name()) != c.Client {
		l.release()
		return nil, &protocol.Error{Code: wire.CodeStaleGeneration, Message: fmt.Sprintf("plugin %q is not a member of the current generation %d: this process belongs to another one",
			c.Client.Name(), l.gen.Number())}
	}
	return l.root(c.Client.Name()), nil
}

// callProvider calls the provider plugin's ref for the call c made from
// from: under ctx, carrying the callee's frame, one level deeper. The
// callee's own error answer is forwarded (code and message, redacted by
// its client); its crash fails the call at once (-32006).
func (k *Kernel) callProvider(ctx context.Context, from *frame, provider, ref string, key capability.Key, c sidecar.Call) (json.RawMessage, error) {
	cl, release, err := calleeClient(ctx, from, provider, key, c)
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, params, sp := k.calleeRequest(ctx, from, provider, ref, c)
	if c.Stream != nil {
		err := k.relayStream(ctx, cl, params, provider, key, c)
		sp.end(err)
		return nil, err
	}
	out, err := cl.Invoke(ctx, wire.MethodProviderInvoke, params)
	sp.end(err)
	if err != nil {
		return nil, calleeError(err, provider, key, c)
	}
	return out, nil
}

// calleeClient returns the running client of the provider plugin of the
// call c made from from, starting a lazy one (under ctx), with the
// release of its use; or the CodeNotAvailable answer saying it cannot be
// reached.
func calleeClient(ctx context.Context, from *frame, provider string, key capability.Key, c sidecar.Call) (*sidecar.Client, func(), error) {
	cl, release, err := from.live.use(ctx, provider, func() string {
		return fmt.Sprintf("capability/call %s.%s by plugin %s", key, c.Method, c.Client.Name())
	})
	if err != nil {
		return nil, release, notAvailable(c.Client.Name(), key, c.Method, fmt.Sprintf("provider %q: %v", provider, err))
	}
	return cl, release, nil
}

// calleeRequest returns what the call c made from from sends the
// provider plugin's ref: the context of the request (carrying the
// callee's frame, one level deeper, and the call's span), its params and
// the span, which the caller ends.
func (k *Kernel) calleeRequest(ctx context.Context, from *frame, provider, ref string, c sidecar.Call) (context.Context, wire.ProviderInvokeParams, callSpan) {
	callee := &frame{live: from.live, plugin: provider, depth: from.depth + 1, up: from}
	counters := from.live.root(provider).counters() // the root frame's: no lookup in the table
	callee.stats.Store(counters)
	sp := beginCall(ctx, counters, k.config().Observer, observe.CallInfo{Plugin: provider, Kind: contribution.KindProvider,
		Key: contribution.ProviderID(provider, ref), Caller: c.Client.Name(), Capability: c.Capability, Method: c.Method,
		Generation: from.live.gen.Number()})
	params := wire.ProviderInvokeParams{Ref: ref, Input: c.Input, Traceparent: wire.Traceparent(sp.ctx)}
	return context.WithValue(sp.ctx, frameKey{}, callee), params, sp
}

// calleeError is the answer to the call c when the provider plugin's
// provider failed with err: its own error answer as it is, -32006 for its
// crash or its stop, -32603 for a stream that broke its flow control, and
// anything else (the call's context ended, the answer did not decode) as
// it is.
func calleeError(err error, provider string, key capability.Key, c sidecar.Call) error {
	var pe *protocol.Error
	var ce *sidecar.CrashError
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.As(err, &ce):
		return notAvailable(c.Client.Name(), key, c.Method, fmt.Sprintf("provider %q crashed: %v", provider, ce))
	case errors.Is(err, sidecar.ErrClosed):
		return notAvailable(c.Client.Name(), key, c.Method, fmt.Sprintf("provider %q is stopping", provider))
	case errors.Is(err, sidecar.ErrFlowControl):
		return &protocol.Error{Code: wire.CodeInternalError, Message: fmt.Sprintf("capability %q (call of %q by plugin %q): provider %q: %v",
			key, string(key)+"."+c.Method, c.Client.Name(), provider, err)}
	}
	return err
}
