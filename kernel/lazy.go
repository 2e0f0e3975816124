package kernel

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/extkernel/extkernel/internal/builder"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

// Lazy members (docs/architecture.md, "Activation"): a lazy member is
// published from its declarations without a process, in a slot
// (builder.Lazy) that the first use starts, single-flight, and that an
// idle timeout stops again. The kernel reaches a plugin's process for a
// call through use, which holds the slot until the call ends, so that an
// idle stop never takes a process a call is about to use; the slot tells
// the kernel about its starts and stops through the hooks below, where the
// supervision rules apply: a failed start is a crash, counted against the
// crash budget; past it the member is held down.

// noRelease is the release of a use of an eager member's process.
func noRelease() {}

// use returns plugin's process in l for one call, starting a lazy member
// that does not run (under ctx, the caller's deadline), with the release
// the caller MUST call when the call ended. by says what the use is, for
// status ("call to provider x by host"); it is formatted only when the use
// starts the plugin. The error wraps ErrPluginDown when the plugin cannot
// be reached.
func (l *live) use(ctx context.Context, plugin string, by func() string) (*sidecar.Client, func(), error) {
	z := l.run.Lazy(plugin)
	if z == nil {
		c, err := l.running(plugin)
		return c, noRelease, err
	}
	c, release, err := z.Acquire(ctx, by)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Cause(ctx)) {
			return nil, release, fmt.Errorf("%w: waiting for its start: %w", ErrPluginDown, err)
		}
		return nil, release, fmt.Errorf("%w: %w", ErrPluginDown, err)
	}
	return c, release, nil
}

// tryUse is use without starting or waiting: ok is false when plugin is a
// lazy member with no process ready now (the caller then goes the way
// that may block).
func (l *live) tryUse(plugin string) (c *sidecar.Client, release func(), ok bool, err error) {
	z := l.run.Lazy(plugin)
	if z == nil {
		c, err := l.running(plugin)
		return c, noRelease, true, err
	}
	c, release, ok = z.TryAcquire()
	return c, release, ok, nil
}

// lazyOptions are the build options of lazy members: the declaration
// cache under the home's state directory, the hooks, the idle timeouts.
func (k *Kernel) lazyOptions(o *builder.Options) {
	c := k.config()
	if c.Home != "" {
		o.Cache = builder.DeclCache{Dir: filepath.Join(c.Home, "state", "declarations")}
	}
	o.IdleTimeout = c.IdleTimeoutOf
	o.LazyHooks = builder.LazyHooks{
		MayStart:    k.mayStart,
		Starting:    k.lazyStarting,
		Started:     k.lazyStarted,
		IdleStopped: k.idleStopped,
	}
}

// mayStart refuses a start of a plugin held down past its crash budget.
func (k *Kernel) mayStart(name string) error {
	if k.super.isHeld(name) {
		return fmt.Errorf("plugin %q %s", name, heldReason)
	}
	return nil
}

// lazyStarting records that a use starts a lazy member.
func (k *Kernel) lazyStarting(name, by string) {
	k.setState(name, observe.StateStarting, "activated by "+by, nil)
}

// lazyStarted records a lazy member's start: ready; a drift, which fails
// it (a required one is logged as a required failure); or a failed start,
// the crash path.
func (k *Kernel) lazyStarted(name string, c *sidecar.Client, a builder.Activation, err error) {
	if obs := k.config().Observer; obs != nil {
		obs.Start(observe.StartInfo{Plugin: name, Duration: a.Start, Err: err, ActivatedBy: a.By})
	}
	k.events.emit(observe.Event{Type: observe.EventPlugin, Generation: k.currentNumber(), Plugin: name, State: startState(err), Elapsed: a.Start, Err: err,
		Message: "activated by " + a.By})
	var drift *builder.DriftError
	switch {
	case err == nil:
		k.setState(name, observe.StateReady, "", nil)
	case errors.As(err, &drift):
		required := k.isRequired(name)
		k.log.Error("lazy plugin's handshake drifted from what its generation published; it is failed until a reload or restart",
			"plugin", name, "required", required, "error", err)
		k.setState(name, observe.StateFailed, err.Error(), nil)
	case errors.Is(err, builder.ErrSlotClosed):
	default:
		var stderr []string
		var se *sidecar.StartError
		if errors.As(err, &se) {
			stderr = se.Stderr
		}
		k.recordCrash(name, 0, fmt.Errorf("start failed: %w", err), stderr)
	}
}

// startState is the builder state an activation's outcome reports.
func startState(err error) string {
	if err != nil {
		return string(builder.Failed)
	}
	return string(builder.Ready)
}

// idleStopped records an idle stop.
func (k *Kernel) idleStopped(name string, _ *sidecar.Client, idle time.Duration) {
	k.setState(name, observe.StateIdleStopped, fmt.Sprintf("idle for %v; its next use starts it again", idle), nil)
}

// isRequired reports whether the current generation runs name as required.
func (k *Kernel) isRequired(name string) bool {
	l := k.current.Load()
	if l == nil {
		return false
	}
	m := l.gen.Member(name)
	return m != nil && m.Required
}

// lazyCrashed applies the crash budget to a lazy member whose process
// crashed or failed to start: within it the member is declared again (its
// next use starts it: no restart is scheduled, nothing may be using it);
// past it, held down. It reports whether plugin is a lazy member of the
// current generation (else the eager rules apply).
func (k *Kernel) lazyCrashed(plugin string, exhausted bool, reason string, stderr []string) bool {
	l := k.current.Load()
	if l == nil {
		return false
	}
	z := l.run.Lazy(plugin)
	if z == nil {
		return false
	}
	if exhausted {
		z.Hold(errors.New(reason))
		k.setState(plugin, observe.StateFailed, reason, stderr)
		return true
	}
	k.setState(plugin, observe.StateDeclared, reason+"; its next use starts it again", stderr)
	return true
}

// memberStatus fills in what a plugin's status says of its membership of
// l: its version, its activation and, for a lazy member, its slot's
// activity.
func memberStatus(l *live, st *observe.PluginStatus) {
	if l == nil {
		return
	}
	m := l.gen.Member(st.Name)
	if m == nil {
		return
	}
	if v := m.Package.Manifest.Version; v != nil {
		st.Version = v.String()
	}
	z := l.run.Lazy(st.Name)
	if z == nil {
		st.Activation = pluginpkg.ActivationEager
		return
	}
	st.Activation = pluginpkg.ActivationLazy
	s := z.Stats()
	st.Lazy = &observe.LazyStatus{Declarations: z.Origin(), ActivatedBy: s.Last.By, Activated: s.Last.At,
		StartDuration: s.Last.Start, SpawnDuration: s.Last.Spawn, HandshakeDuration: s.Last.Handshake, FirstCall: s.FirstCall, LastUsed: s.LastUsed, Activations: s.Starts, IdleStops: s.Stops}
}

// activate starts the lazy member name of l now, if it does not run: an
// explicit start request (RestartPlugin of a member that is declared).
func (k *Kernel) activate(ctx context.Context, z *builder.Lazy) error {
	return z.Start(ctx, "an explicit start request")
}

// currentNumber is the current generation's number, 0 before the first
// is published: what an event about a plugin carries.
func (k *Kernel) currentNumber() uint64 {
	if l := k.current.Load(); l != nil {
		return l.gen.Number()
	}
	return 0
}
