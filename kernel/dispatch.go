package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// ErrUnknownTarget is wrapped by dispatch errors naming a provider or action
// ID that no contribution of the current generation has, and, in strict
// mode (config.Config.Strict), a point or slot the host did not declare.
var ErrUnknownTarget = errors.New("no such contribution")

// undeclared returns an error wrapping ErrUnknownTarget when the kernel is
// strict and the host did not declare target, the what ("point", "slot")
// named.
func undeclared[T ~string](strict bool, what string, target T, declared []T) error {
	if !strict || slices.Contains(declared, target) {
		return nil
	}
	return fmt.Errorf("%w: %s %q is not one the host declares (strict mode)", ErrUnknownTarget, what, target)
}

// ErrPluginDown is wrapped by a *PluginError when the plugin does not run:
// it crashed, or failed and was left out of the generation.
var ErrPluginDown = errors.New("plugin is not running")

// PluginError reports a plugin's failure during a dispatched call.
type PluginError struct {
	Plugin string
	// Kind and Key name the contribution called (e.g. interceptor at
	// "tool.before").
	Kind contribution.Kind
	Key  string
	// Required says whether the plugin's failure fails the call closed.
	Required bool
	Err      error
}

// Error names the plugin, the contribution and the cause.
func (e *PluginError) Error() string {
	return fmt.Sprintf("plugin %q: %s %q: %v", e.Plugin, e.Kind, e.Key, e.Err)
}

// Unwrap returns the cause: the crash of the plugin, a *protocol.Error from
// the plugin, context.DeadlineExceeded, ErrPluginDown, ...
func (e *PluginError) Unwrap() error { return e.Err }

// Step is one interceptor's part in a chain.
type Step struct {
	Plugin string
	// Decision is the plugin's decision (continue, modify, deny), or
	// "skipped" when an optional plugin failed (Err says why).
	Decision string
	Reason   string
	Err      error
	Elapsed  time.Duration
}

// DecisionSkipped marks a Step whose optional plugin failed.
const DecisionSkipped = "skipped"

// InterceptResult is the outcome of an interceptor chain.
type InterceptResult struct {
	// Payload is the payload after every modification.
	Payload json.RawMessage
	// Denied is set when an interceptor denied; DeniedBy and Reason say who
	// and why, and later interceptors did not run.
	Denied   bool
	DeniedBy string
	Reason   string
	// Steps lists who acted, in chain order.
	Steps []Step
	// Generation is the number of the generation that ran the chain.
	Generation uint64
}

// Intercept runs the interceptor chain at point: in effective order, each
// interceptor may continue, modify the payload (the next one sees the
// modification) or deny (the chain stops). A required plugin's failure or
// timeout fails the chain closed with a *PluginError; an optional plugin's
// failure is skipped and recorded in Steps. Each call is bounded by the
// intercept deadline. In strict mode, a point the host did not declare
// (config.Config.Points) is an error wrapping ErrUnknownTarget; otherwise it
// runs no interceptor (none is registered there) and the payload comes back
// unchanged.
func (k *Kernel) Intercept(ctx context.Context, point contribution.Point, payload json.RawMessage) (_ *InterceptResult, err error) {
	if ctx2, end := k.dispatching(ctx, contribution.KindInterceptor, string(point)); end != nil {
		ctx = ctx2
		defer func() { end(err) }()
	}
	c := k.config()
	if err := undeclared(c.Strict, "point", point, c.Points); err != nil {
		return nil, err
	}
	l, err := k.acquire()
	if err != nil {
		return nil, err
	}
	defer l.release()
	chain := l.gen.Registry().Interceptors(point)
	res := &InterceptResult{Payload: payload, Generation: l.gen.Number(), Steps: make([]Step, 0, len(chain))}
	for _, c := range chain {
		m := l.gen.Member(c.Source.Plugin)
		start := time.Now()
		out, err := k.interceptOne(ctx, l, m, point, res.Payload)
		step := Step{Plugin: c.Source.Plugin, Decision: out.Decision, Reason: out.Reason, Elapsed: time.Since(start)}
		if err != nil {
			perr := &PluginError{Plugin: step.Plugin, Kind: contribution.KindInterceptor, Key: string(point), Required: m.Required, Err: err}
			if m.Required || ctx.Err() != nil {
				return nil, perr
			}
			step.Decision, step.Err = DecisionSkipped, perr
			k.skips.skipped(k.log, step.Plugin, l.client(step.Plugin), point, err)
			res.Steps = append(res.Steps, step)
			continue
		}
		k.skips.served(k.log, step.Plugin)
		res.Steps = append(res.Steps, step)
		switch out.Decision {
		case protocol.DecisionModify:
			res.Payload = out.Payload
		case protocol.DecisionDeny:
			res.Denied, res.DeniedBy, res.Reason = true, step.Plugin, out.Reason
			return res, nil
		}
	}
	return res, nil
}

func (k *Kernel) interceptOne(ctx context.Context, l *live, m *generation.Member, point contribution.Point, payload json.RawMessage) (protocol.InterceptResult, error) {
	if m == nil {
		return protocol.InterceptResult{}, ErrPluginDown
	}
	f := l.root(m.Package.Name)
	sp := beginCall(ctx, f.counters(), k.config().Observer, observe.CallInfo{Plugin: f.plugin, Kind: contribution.KindInterceptor, Key: string(point), Generation: l.gen.Number()})
	out, err := protocol.InterceptResult{}, error(nil)
	ctx, c, release, err := k.reach(sp.ctx, l, m, k.config().Deadlines.Intercept, func() string {
		return "call to interception point " + string(point) + " by host"
	})
	if err == nil {
		out, err = c.Intercept(ctx, string(point), payload)
		release()
	}
	sp.end(err)
	return out, err
}

// reach returns m's process in l for one host request under ctx bounded
// by d, with the request's context (dispatchContext) and the release the
// caller MUST call when the request ended (see live.use). While m's failed
// bake is being rolled back (bake.go), the request waits for that, at
// most d and within ctx, and reaches the plugin in the generation the
// rollback published, whose lease the release then also ends; so does a
// request that found the plugin down as its bake failed.
func (k *Kernel) reach(ctx context.Context, l *live, m *generation.Member, d time.Duration,
	by func() string) (context.Context, *sidecar.Client, func(), error) {
	name := m.Package.Name
	if k.bakes.returns.Load() > 0 {
		if l2, m2, ok := k.afterReturn(ctx, name, d); ok {
			return reachIn(ctx, l2, m2, d, by)
		}
	}
	cctx := dispatchContext(ctx, l, m, d)
	c, release, err := l.use(cctx, name, by)
	if err == nil || !errors.Is(err, ErrPluginDown) {
		return cctx, c, release, err
	}
	if l2, m2, ok := k.afterReturn(ctx, name, d); ok {
		return reachIn(ctx, l2, m2, d, by)
	}
	return cctx, nil, release, err
}

// reachIn is reach's use of m in l2, a generation leased for the request.
func reachIn(ctx context.Context, l2 *live, m2 *generation.Member, d time.Duration,
	by func() string) (context.Context, *sidecar.Client, func(), error) {
	cctx := dispatchContext(ctx, l2, m2, d)
	c, release, err := l2.use(cctx, m2.Package.Name, by)
	if err != nil {
		l2.release()
		return cctx, nil, release, err
	}
	return cctx, c, func() { release(); l2.release() }, nil
}

// dispatchContext is the context of the host's request to m: bounded by d
// (sidecar.WithCallTimeout) and tagged with m's root frame in l, so that
// m's capability/call naming the request as its parent is served by l.
func dispatchContext(ctx context.Context, l *live, m *generation.Member, d time.Duration) context.Context {
	return sidecar.WithCallTimeout(context.WithValue(ctx, frameKey{}, l.root(m.Package.Name)), d)
}

// StrategyResult is the outcome of a strategy call.
type StrategyResult struct {
	// Owner is the plugin that owns the slot; empty when the host default
	// applies.
	Owner string
	// HostDefault is set when the host must apply its own default: the
	// slot is unclaimed, or its optional owner failed (Err says why).
	HostDefault bool
	Output      json.RawMessage
	Err         error
	Generation  uint64
}

// Strategy invokes the owner of slot with input. When no plugin owns the
// slot, the result says the host default applies. A required owner's failure
// is returned as a *PluginError; an optional owner's failure falls back to
// the host default with the error in the result. In strict mode, a slot the
// host did not declare (config.Config.Slots) is an error wrapping
// ErrUnknownTarget; otherwise the result says the host default applies
// (no plugin can own an undeclared slot).
func (k *Kernel) Strategy(ctx context.Context, slot contribution.Slot, input json.RawMessage) (_ *StrategyResult, err error) {
	if ctx2, end := k.dispatching(ctx, contribution.KindStrategy, string(slot)); end != nil {
		ctx = ctx2
		defer func() { end(err) }()
	}
	c := k.config()
	if err := undeclared(c.Strict, "slot", slot, c.Slots); err != nil {
		return nil, err
	}
	l, err := k.acquire()
	if err != nil {
		return nil, err
	}
	defer l.release()
	res := &StrategyResult{Generation: l.gen.Number()}
	owner, ok := l.gen.Registry().SlotOwner(slot)
	if !ok {
		res.HostDefault = true
		return res, nil
	}
	m := l.gen.Member(owner.Source.Plugin)
	res.Owner = owner.Source.Plugin
	out, err := k.invoke(ctx, l, m, contribution.KindStrategy, string(slot), k.config().Deadlines.Strategy, wire.MethodStrategyInvoke,
		wire.StrategyInvokeParams{Slot: string(slot), Input: input})
	if err != nil {
		perr := &PluginError{Plugin: res.Owner, Kind: contribution.KindStrategy, Key: string(slot), Required: m.Required, Err: err}
		if m.Required || ctx.Err() != nil {
			return nil, perr
		}
		res.HostDefault, res.Err = true, perr
		return res, nil
	}
	res.Output = out
	return res, nil
}

// CallProvider calls the provider with the namespaced id
// ("plugin/<name>/<ref>") and returns its output. A plugin's failure is a
// *PluginError; an unknown id wraps ErrUnknownTarget. With
// config.Config.ValidateProviderInput, input is first checked against the
// schema the provider declared: input it refuses is an *InputError, and a
// schema that does not compile a *PluginError wrapping ErrBadSchema; either way
// the plugin is not called.
func (k *Kernel) CallProvider(ctx context.Context, id string, input json.RawMessage) (json.RawMessage, error) {
	return k.callUnique(ctx, contribution.KindProvider, id, func(l *live, c contribution.Contribution) (string, any, error) {
		if k.config().ValidateProviderInput {
			if err := k.checkInput(l, c, input); err != nil {
				return "", nil, err
			}
		}
		p := c.Payload.(contribution.Provider)
		return wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: p.Ref, Input: input}, nil
	})
}

// RunAction runs the UI action with the given namespaced id,
// "plugin/<name>/<id>" (contribution.ActionID), passing the UI context; the
// plugin receives its own local ID. Any failure is a *PluginError; an
// unknown id wraps ErrUnknownTarget.
func (k *Kernel) RunAction(ctx context.Context, id string, uiContext json.RawMessage) (json.RawMessage, error) {
	return k.callUnique(ctx, contribution.KindAction, id, func(_ *live, c contribution.Contribution) (string, any, error) {
		a := c.Payload.(contribution.Action)
		return wire.MethodActionRun, wire.ActionRunParams{ID: a.ID, Context: uiContext}, nil
	})
}

func (k *Kernel) callUnique(ctx context.Context, kind contribution.Kind, id string,
	call func(*live, contribution.Contribution) (string, any, error)) (_ json.RawMessage, err error) {
	if ctx2, end := k.dispatching(ctx, kind, id); end != nil {
		ctx = ctx2
		defer func() { end(err) }()
	}
	l, err := k.acquire()
	if err != nil {
		return nil, err
	}
	defer l.release()
	c, found := l.gen.Registry().Provider(id)
	if kind == contribution.KindAction {
		c, found = findAction(l.gen.Registry(), id)
	}
	if !found {
		return nil, fmt.Errorf("%s %q: %w in generation %d", kind, id, ErrUnknownTarget, l.gen.Number())
	}
	m := l.gen.Member(c.Source.Plugin)
	deadlines := k.config().Deadlines
	deadline := deadlines.Provider
	if kind == contribution.KindAction {
		deadline = deadlines.Action
	}
	method, params, err := call(l, c)
	if err != nil {
		return nil, err
	}
	out, err := k.invoke(ctx, l, m, kind, id, deadline, method, params)
	if err != nil {
		return nil, &PluginError{Plugin: c.Source.Plugin, Kind: kind, Key: id, Required: m.Required, Err: err}
	}
	return out, nil
}

// findAction returns the action with the given namespaced ID (unique in a
// registry).
func findAction(r *contribution.Registry, id string) (contribution.Contribution, bool) {
	if as := r.Get(contribution.KindAction, id); len(as) > 0 {
		return as[0], true
	}
	return contribution.Contribution{}, false
}

// invoke sends m the request method with params, bounded by d: the call
// to its contribution kind at key, counted in its stats and reported to
// the observer.
func (k *Kernel) invoke(ctx context.Context, l *live, m *generation.Member, kind contribution.Kind, key string,
	d time.Duration, method string, params any) (json.RawMessage, error) {
	if m == nil {
		return nil, ErrPluginDown
	}
	f := l.root(m.Package.Name)
	sp := beginCall(ctx, f.counters(), k.config().Observer, observe.CallInfo{Plugin: f.plugin, Kind: kind, Key: key, Generation: l.gen.Number()})
	var out json.RawMessage
	ctx, c, release, err := k.reach(sp.ctx, l, m, d, func() string { return fmt.Sprintf("call to %s %s by host", kind, key) })
	if err == nil {
		out, err = c.Invoke(ctx, method, traced(params, wire.Traceparent(sp.ctx)))
		release()
	}
	sp.end(err)
	return out, err
}

// traced returns params carrying tp, the traceparent of the call's
// context (set by the host or its Observer), when there is one.
func traced(params any, tp string) any {
	if tp == "" {
		return params
	}
	return wire.SetTraceparent(params, tp)
}
