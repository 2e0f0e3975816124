package kernel

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/wire"
)

// Invoke invokes the contribution of kind in effect at key, a contribution a
// plugin declared in its handshake (protocol 1.1), with input, and returns its
// output: the plugin is sent contribution/invoke with the kind and key
// (docs/protocol.md §5.14). kind must be one the host declares in
// config.Config.Kinds beyond the built-in ones, with policy Exclusive (the
// key's owner is invoked) or Unique (its one declaration is); an Ordered kind
// has several contributions per key: use InvokeEach. The call is bounded by the
// provider deadline (config.Deadlines.Provider) and runs under a lease on the
// current generation, like CallProvider.
//
// A kind the host does not declare, and a key no contribution of the
// current generation has, are errors wrapping ErrUnknownTarget. Any
// failure of the plugin is a *PluginError naming it, the kind and the key,
// whose Required says whether the plugin is required; as for providers,
// there is no fallback: the host decides what an optional plugin's failure
// means.
func (k *Kernel) Invoke(ctx context.Context, kind contribution.Kind, key string, input json.RawMessage) (_ json.RawMessage, err error) {
	if ctx2, end := k.dispatching(ctx, kind, key); end != nil {
		ctx = ctx2
		defer func() { end(err) }()
	}
	spec, err := k.hostKind(kind)
	if err != nil {
		return nil, err
	}
	if spec.Policy == contribution.Ordered {
		return nil, fmt.Errorf("kernel: invoke %s %q: kind %q is ordered, with any number of contributions per key: use InvokeEach", kind, key, kind)
	}
	l, err := k.acquire()
	if err != nil {
		return nil, err
	}
	defer l.release()
	cs := l.gen.Registry().Get(kind, key)
	if len(cs) == 0 {
		return nil, fmt.Errorf("%s %q: %w in generation %d", kind, key, ErrUnknownTarget, l.gen.Number())
	}
	return k.invokeContribution(ctx, l, cs[0], input)
}

// Answer is one plugin's part in InvokeEach.
type Answer struct {
	// Plugin is the plugin whose contribution was invoked.
	Plugin string
	// Output is its output; nil when it had none or failed.
	Output json.RawMessage
	// Err is set when the plugin is optional and failed: a *PluginError.
	// Later contributions were still invoked.
	Err error
}

// InvokeEach invokes every contribution of kind in effect at key, in the
// registry's order (for an Ordered kind, the effective order: priority
// descending, then plugin name, then declaration order; for an Exclusive
// or Unique kind, the one contribution), one after the other, each with
// input, and returns one Answer per contribution in that order; none when
// there is none at key. Each call is bounded by the provider deadline and
// all of them run under one lease on the current generation. A required
// plugin's failure stops the run: InvokeEach returns the *PluginError and
// no answers. An optional plugin's failure is recorded in its Answer and
// the run goes on, unless ctx ended. A kind the host does not declare
// (config.Config.Kinds, beyond the built-in ones) is an error wrapping
// ErrUnknownTarget.
func (k *Kernel) InvokeEach(ctx context.Context, kind contribution.Kind, key string, input json.RawMessage) (_ []Answer, err error) {
	if ctx2, end := k.dispatching(ctx, kind, key); end != nil {
		ctx = ctx2
		defer func() { end(err) }()
	}
	if _, err := k.hostKind(kind); err != nil {
		return nil, err
	}
	l, err := k.acquire()
	if err != nil {
		return nil, err
	}
	defer l.release()
	cs := l.gen.Registry().Get(kind, key)
	out := make([]Answer, 0, len(cs))
	for _, c := range cs {
		a := Answer{Plugin: c.Source.Plugin}
		a.Output, a.Err = k.invokeContribution(ctx, l, c, input)
		if a.Err != nil {
			if m := l.gen.Member(a.Plugin); m == nil || m.Required || ctx.Err() != nil {
				return nil, a.Err
			}
			k.log.Debug("optional contribution failed", "plugin", a.Plugin, "kind", kind, "key", key, "error", a.Err)
		}
		out = append(out, a)
	}
	return out, nil
}

// hostKind returns the spec of kind, a kind the host declares beyond the
// built-in ones, or an error wrapping ErrUnknownTarget.
func (k *Kernel) hostKind(kind contribution.Kind) (contribution.KindSpec, error) {
	if kind.Builtin() {
		return contribution.KindSpec{}, fmt.Errorf("kernel: kind %q is built in: use Intercept, Strategy, CallProvider or RunAction", kind)
	}
	for _, s := range k.config().Kinds {
		if s.Kind == kind {
			return s, nil
		}
	}
	return contribution.KindSpec{}, fmt.Errorf("%w: kind %q is not one the host declares (Config.Kinds)", ErrUnknownTarget, kind)
}

// invokeContribution sends c's plugin contribution/invoke under l, bounded
// by the provider deadline; a failure is a *PluginError.
func (k *Kernel) invokeContribution(ctx context.Context, l *live, c contribution.Contribution, input json.RawMessage) (json.RawMessage, error) {
	m := l.gen.Member(c.Source.Plugin)
	out, err := k.invoke(ctx, l, m, c.Kind, c.Key, k.config().Deadlines.Provider, wire.MethodContributionInvoke,
		wire.ContributionInvokeParams{Kind: string(c.Kind), Key: c.Key, Input: input})
	if err != nil {
		required := m != nil && m.Required
		return nil, &PluginError{Plugin: c.Source.Plugin, Kind: c.Kind, Key: c.Key, Required: required, Err: err}
	}
	return out, nil
}
