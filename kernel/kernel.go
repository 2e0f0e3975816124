package kernel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/builder"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

var (
	// ErrNotStarted is returned by dispatch calls before Start succeeded.
	ErrNotStarted = errors.New("kernel not started")
	// ErrClosed is returned by every call after Close.
	ErrClosed = errors.New("kernel closed")
	// ErrAlreadyStarted is returned by a second Start.
	ErrAlreadyStarted = errors.New("kernel already started")
)

// Kernel is the extension kernel a host embeds. Create it with New.
type Kernel struct {
	// conf is the config: replaced whole by Reconfigure (under buildMu),
	// read without a lock through config(). Home, DataRoot and Logger
	// never change.
	conf atomic.Pointer[config.Config]
	log  hclog.Logger

	loader  pluginpkg.Loader // reuses unchanged manifests across reloads
	current atomic.Pointer[live]
	closed  atomic.Bool
	events  bus

	// buildMu serializes Start, Reload, restarts and Close; it is never
	// held by dispatch. Lock order: buildMu, then builds.mu, then
	// supervisor.mu, then bus.mu.
	buildMu    sync.Mutex
	number     uint64            // last generation number used; under buildMu
	started    bool              // under buildMu
	lastInputs generation.Inputs // of the current generation; under buildMu
	retiring   sync.WaitGroup
	builds     buildCancel // lets Close cancel the build in progress
	super      *supervisor
	redact     atomic.Pointer[func(string) string] // nil when no secret is configured
	skips      skipLog                             // optional interceptors' skips, logged once per state
	stats      statsTable                          // every plugin's call counters
	bakes      bakeTable                           // the bakes watched (bake.go)
	usage      usageTable                          // every plugin's usage counters (usage.go)
}

// New returns an idle Kernel for cfg. It validates cfg but starts nothing.
func New(cfg config.Config) (*Kernel, error) {
	cfg, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	k := &Kernel{log: cfg.Logger.Named("kernel"), super: newSupervisor(), number: cfg.FirstGeneration - 1}
	k.conf.Store(&cfg)
	k.setRedactor(cfg)
	return k, nil
}

// prepare checks cfg and returns it as the kernel keeps it, for New and
// Reconfigure: it needs a Home, and config.Config.Validate checks every
// value (its *config.Error is wrapped, after "kernel: config: "); then
// resolve makes the paths absolute and copies the maps, and withDefaults
// applies the defaults.
func prepare(cfg config.Config) (config.Config, error) {
	if cfg.Home == "" {
		return cfg, errors.New("kernel: config: home is required")
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("kernel: config: %w", err)
	}
	cfg, err := resolve(cfg)
	if err != nil {
		return cfg, err
	}
	return withDefaults(cfg), nil
}

// config returns the kernel's config: one atomic load. A caller that reads
// several fields reads them from one value.
func (k *Kernel) config() *config.Config { return k.conf.Load() }

// Current returns the published generation, or nil before Start and after
// Close. It takes no lock. The generation may be retired at any time after
// it returns; use the dispatch methods to call plugins safely. It hands out
// no sidecar client (a call through one would skip the kernel's leases):
// Plugins reports each plugin's state and PID.
func (k *Kernel) Current() *generation.Generation {
	if l := k.current.Load(); l != nil {
		return l.gen
	}
	return nil
}

// Start builds the first generation (config.Config.FirstGeneration, default 1)
// from the home and publishes it. On failure it
// returns the build's *generation.BuildError and leaves nothing running.
func (k *Kernel) Start(ctx context.Context) error {
	k.buildMu.Lock()
	defer k.buildMu.Unlock()
	switch {
	case k.closed.Load():
		return ErrClosed
	case k.started:
		return ErrAlreadyStarted
	}
	r, err := k.build(ctx, k.inputs(nil), nil, nil)
	if err != nil {
		return err
	}
	k.started = true
	k.publish(r)
	return nil
}

// build builds the next generation from in, loading the home first when
// in.Installed is nil, and adopting from prev (nil for none) the clients
// adopt names. A failed build does not use up a generation number, and
// gives every plugin it set starting its state from before the build; a
// build cancelled by Close fails with an error wrapping ErrClosed. It must
// be called with buildMu held.
func (k *Kernel) build(ctx context.Context, in generation.Inputs, prev *live, adopt []string) (*builder.Running, error) {
	ctx, done := k.builds.begin(ctx)
	defer done()
	if in.Installed == nil {
		inst, err := k.loader.Load(k.config().Home)
		if err != nil {
			return nil, fmt.Errorf("kernel: %w", err)
		}
		in.Installed, in.Launch = inst, k.launches(inst)
	}
	in.Number = k.number + 1
	before := k.super.states()
	o := k.buildOptions(prev, adopt)
	o.OnEvent = func(e builder.Event) { k.progress(in.Number, e) }
	r, err := builder.Build(ctx, in, o)
	if err != nil {
		k.settle(before)
		if errors.Is(context.Cause(ctx), ErrClosed) {
			err = fmt.Errorf("%w: build cancelled: %w", ErrClosed, err)
		}
		k.events.emit(observe.Event{Type: observe.EventBuildFailed, Generation: in.Number, Err: err})
		return nil, err
	}
	k.number = in.Number
	in.KeepFailed, in.Plan = nil, nil
	k.lastInputs = in
	return r, nil
}

// buildCancel holds the cancel func of the build in progress (builds are
// serialized by buildMu, so there is at most one), so that Close can cancel
// it without waiting for buildMu.
type buildCancel struct {
	mu      sync.Mutex
	closing bool                    // under mu: Close began; builds fail at once
	cancel  context.CancelCauseFunc // under mu: of the build in progress, or nil
}

// begin returns the context of a build and the func to call when it ends.
// After cancelAll, the context is cancelled from the start.
func (b *buildCancel) begin(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		cancel(ErrClosed)
	} else {
		b.cancel = cancel
	}
	return ctx, func() {
		b.mu.Lock()
		b.cancel = nil
		b.mu.Unlock()
		cancel(nil)
	}
}

// cancelAll cancels the build in progress, and every later one, with
// ErrClosed as the cause.
func (b *buildCancel) cancelAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closing = true
	if b.cancel != nil {
		b.cancel(ErrClosed)
	}
}

// inputs maps the config onto the inputs of a generation of inst (nil:
// build loads the home). Every startup decision is made here, once, and
// passed down as data: each package's launch value (launches), the
// packages the host expects.
func (k *Kernel) inputs(inst *pluginpkg.Installed) generation.Inputs {
	c := k.config()
	return generation.Inputs{
		Installed: inst,
		Launch:    k.launches(inst),
		Host:      c.Capabilities,
		Spec: contribution.HostSpec{Points: c.Points, Slots: c.Slots, Strict: c.Strict, SlotOwners: c.SlotOwners,
			Kinds: c.Kinds},
		Expect: k.expected(),
	}
}

// buildOptions maps the config onto how a build starts its processes: the
// pool, the budget, and what every client starts with (the host's
// identity, redaction, computed once in New, timeouts, and the kernel's
// functions that report and serve the plugins' calls), adopting from prev
// (nil for none) the clients adopt names.
func (k *Kernel) buildOptions(prev *live, adopt []string) builder.Options {
	c := k.config()
	o := builder.Options{PoolSize: c.PoolSize, Budget: c.StartupBudget, Adopt: adopt,
		Client: sidecar.Options{
			Logger:            c.Logger,
			Host:              c.Host,
			DataRoot:          c.DataRoot,
			Redact:            k.clientRedactor(),
			Session:           c.Session,
			HandshakeTimeout:  c.HandshakeTimeout,
			HeartbeatInterval: c.Supervision.HeartbeatInterval,
			HeartbeatTimeout:  c.Supervision.HeartbeatTimeout,
			HangTimeout:       c.Supervision.HangTimeout,
			MaxCallDuration:   c.MaxCallDuration,
			OnCrash:           k.crashed,
			OnHealth:          k.health,
			OnNotify:          k.notified,
			OnCall:            k.serveCall,
			OnCallAsync:       k.serveCallAsync,
			OnUse:             k.used,
		}}
	if prev != nil {
		o.Previous = prev.run
	}
	k.lazyOptions(&o)
	return o
}

// launches computes the launch value of every package of inst (nil for a
// nil inst): the config's policy over the manifest's runtime.required, its
// plugin_config, plugin_env and limits.
func (k *Kernel) launches(inst *pluginpkg.Installed) map[string]generation.Launch {
	if inst == nil {
		return nil
	}
	c := k.config()
	var out map[string]generation.Launch
	for _, p := range inst.Packages {
		l := generation.Launch{Required: k.required(p), Config: c.PluginConfig[p.Name], Limits: c.LimitsOf(p.Name),
			Confinement: c.ConfinementOf(p.Name), Activation: c.ActivationOf(p)}
		l.Env, l.SecretEnv = k.pluginEnv(p.Name)
		if isDefaultLaunch(l, p) { // generation.Inputs.LaunchOf gives it the same value
			continue
		}
		if out == nil {
			out = make(map[string]generation.Launch)
		}
		out[p.Name] = l
	}
	return out
}

// isDefaultLaunch reports whether l is generation.DefaultLaunch(p) in
// effect: the same policy and activation (eager and "" alike), and no
// config, environment, limits or confinement. launches leaves such a
// package out: a host of many plugins gives most of them nothing of
// their own.
func isDefaultLaunch(l generation.Launch, p *pluginpkg.Package) bool {
	d := generation.DefaultLaunch(p)
	lazy := func(a string) bool { return a == pluginpkg.ActivationLazy }
	return l.Required == d.Required && lazy(l.Activation) == lazy(d.Activation) && len(l.Config) == 0 && len(l.Env) == 0 &&
		len(l.SecretEnv) == 0 && l.Limits == (pluginpkg.ResourceLimits{}) && l.Confinement.Mode == "" &&
		l.Confinement.Grants == nil && l.Confinement.Denies == nil
}

// required applies the config's policy override, else the manifest's.
func (k *Kernel) required(p *pluginpkg.Package) bool {
	switch k.config().Policy[p.Name] {
	case config.FailureRequired:
		return true
	case config.FailureOptional:
		return false
	}
	return generation.DefaultLaunch(p).Required
}

// expected lists the packages the config's policy requires: a build fails
// when one of them is not installed, does not load, or is disabled.
func (k *Kernel) expected() []generation.Expected {
	var out []generation.Expected
	policy := k.config().Policy
	for _, name := range slices.Sorted(maps.Keys(policy)) {
		if policy[name] == config.FailureRequired {
			out = append(out, generation.Expected{Name: name, Why: "the host config requires it"})
		}
	}
	return out
}

// expectRunning adds to in.Expect the members the generation described by
// from runs as required and the config does not already decide: a package
// that marked itself required cannot vanish or break silently at a reload.
// An operator's disable is honoured for them.
func (k *Kernel) expectRunning(in *generation.Inputs, from *generation.Snapshot) {
	for _, p := range from.Packages {
		if p.Required && k.config().Policy[p.Name] == config.FailureDefault {
			in.Expect = append(in.Expect, generation.Expected{Name: p.Name, MayDisable: true,
				Why: fmt.Sprintf("generation %d runs it as required (to remove it, disable it and reload first)", from.Generation)})
		}
	}
}

// publish swaps r in and retires the previous generation, except for the
// clients r adopted. It must be called with buildMu held.
func (k *Kernel) publish(r *builder.Running) {
	g := r.Generation()
	var keep []string
	for _, m := range g.Members() {
		if m.Adopted && (r.Client(m.Package.Name) != nil || r.Lazy(m.Package.Name) != nil) {
			keep = append(keep, m.Package.Name)
		}
	}
	l := newLive(r, k.config().Handlers, &k.stats)
	old := k.current.Load() // buildMu is held: no other swap
	if old != nil {
		l.handed = old.stopped
	}
	k.current.Store(l)
	k.published(l)
	k.logMembers(g)
	k.events.emit(observe.Event{Type: observe.EventGenerationPublished, Generation: g.Number(), Hash: g.Hash()})
	for _, w := range g.Warnings() {
		k.events.emit(observe.Event{Type: observe.EventWarning, Generation: g.Number(), Hash: g.Hash(), Message: w})
	}
	k.watchBakes(l)
	if old != nil {
		k.retire(old, keep)
	}
}

// retire stops a replaced generation's processes once its leases drain or
// the drain timeout passes, and once its predecessor's are stopped (the
// calls in flight there may use clients l adopted), in a goroutine the
// kernel owns. keep names clients the new generation adopted: they are
// released, not stopped. A predecessor, retired earlier, waits at most
// the drain timeout from then: so does l, from its own retirement.
func (k *Kernel) retire(l *live, keep []string) {
	l.retire()
	l.run.Release(keep...)
	k.retiring.Add(1)
	go func() {
		defer k.retiring.Done()
		defer close(l.stopped)
		drain := k.config().DrainTimeout
		t := time.NewTimer(drain)
		defer t.Stop()
		select {
		case <-l.drained:
		case <-t.C:
			k.log.Warn("retired generation did not drain in time; stopping it", "generation", l.gen.Number(),
				"drain_timeout", drain)
		}
		<-l.handed
		k.log.Debug("stopping retired generation", "generation", l.gen.Number(), "adopted", keep)
		if err := l.run.Close(context.Background()); err != nil {
			k.log.Warn("stopping retired generation", "generation", l.gen.Number(), "error", err)
		}
	}()
}

// Close stops every plugin and waits for retired generations to stop. It
// is idempotent; calls after it fail with ErrClosed. It first cancels a
// build in progress (Start, Reload or a supervised restart), which then
// fails with an error wrapping ErrClosed and stops what it started. ctx
// bounds the wait for in-flight calls; when it is done, plugins are stopped
// regardless.
func (k *Kernel) Close(ctx context.Context) error {
	// Cancel the build in progress (Start, Reload or a restart) and stop
	// supervision first, without buildMu: the build holds it and ends
	// quickly once its context is cancelled.
	k.builds.cancelAll()
	k.super.stop()
	k.stopBakes()
	k.buildMu.Lock()
	defer k.buildMu.Unlock()
	if k.closed.Swap(true) {
		return nil
	}
	var err error
	if l := k.current.Swap(nil); l != nil {
		l.retire()
		select {
		case <-l.drained:
		case <-ctx.Done():
		}
		select {
		case <-l.handed:
		case <-ctx.Done():
		}
		err = l.run.Close(context.WithoutCancel(ctx))
		close(l.stopped)
	}
	k.retiring.Wait()
	k.stopped()
	k.events.close()
	return err
}

// acquire leases the current generation.
func (k *Kernel) acquire() (*live, error) {
	for {
		l := k.current.Load()
		if l == nil {
			if k.closed.Load() {
				return nil, ErrClosed
			}
			return nil, ErrNotStarted
		}
		if l.acquire() {
			return l, nil
		}
		// Retired between Load and acquire: the successor is already
		// published (publish swaps before it retires), so load again.
	}
}

// progress forwards the start events of the build of generation n to
// subscribers and the observer, and tracks the starting state. One event
// per change: a start beginning is the plugin-state event "starting"; its
// outcome (ready or failed, with how long it took) is a plugin event, the
// build's progress; the state it leaves the plugin in is announced when
// the generation is published.
func (k *Kernel) progress(n uint64, e builder.Event) {
	if e.State == builder.Starting {
		k.setStateIn(n, e.Plugin, observe.StateStarting)
		return
	}
	if obs := k.config().Observer; obs != nil {
		obs.Start(observe.StartInfo{Plugin: e.Plugin, Duration: e.Elapsed, Err: e.Err})
	}
	k.events.emit(observe.Event{Type: observe.EventPlugin, Generation: n, Plugin: e.Plugin, State: string(e.State), Elapsed: e.Elapsed, Err: e.Err})
}
