package builder

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// build is the state of one Build call.
type build struct {
	in      generation.Inputs
	opts    Options
	closure *capability.Closure
	members map[string]*generation.Member
	env     *slotEnv                   // what its members start with, made by start
	clients map[string]*sidecar.Client // the eager members that run, by name
	lazy    map[string]*Lazy           // the lazy members' slots, by name
	created []*Lazy                    // slots this build made, to close on failure
	failed  map[string]string          // name -> reason
	leftOut map[string]bool            // optional members left out for their declarations
	// consequence marks members failed because another failed: cascaded
	// along requires, or aborted with their batch (*AbortedError).
	consequence  map[string]bool
	consequences []string          // problems that follow from those in problems
	aborted      map[string]bool   // members whose start was aborted with the batch
	started      []*sidecar.Client // started by this build, to stop on failure
	problems     []string
	errs         []error
	warnings     []string
}

// Build resolves, starts and validates a new generation from in and returns
// it with the clients of the members that run. On failure it returns a
// *generation.BuildError and leaves no process it started behind; clients
// named by o.Adopt are never stopped by Build. A Build whose ctx is done
// before it completes fails, its BuildError wrapping context.Cause(ctx).
//
// Each step is one call: resolve the closure, cascade what failed before
// anything starts (so no dependent of a failed provider is launched), start
// the rest, cascade the start failures, check each manifest's methods
// against its handshake (checkMethods), register the contributions
// (leaving out optional plugins that break a rule, each round cascaded),
// assemble.
func Build(ctx context.Context, in generation.Inputs, o Options) (*Running, error) {
	b := &build{in: in, opts: o, members: map[string]*generation.Member{}, clients: map[string]*sidecar.Client{}, lazy: map[string]*Lazy{},
		failed: map[string]string{}, leftOut: map[string]bool{}, consequence: map[string]bool{}, aborted: map[string]bool{}}
	if !b.resolve() || !b.cascade(ctx) {
		return nil, b.fail(ctx)
	}
	defer b.fingerprintAhead()()
	b.start(ctx)
	if !b.cascade(ctx) || !b.notCancelled(ctx) || !b.checkMethods(ctx) {
		return nil, b.fail(ctx)
	}
	reg, ok := b.register(ctx)
	if !ok {
		return nil, b.fail(ctx)
	}
	return b.assemble(reg), nil
}

// fail stops what the build started and returns its BuildError.
func (b *build) fail(ctx context.Context) error {
	err := errors.Join(CloseAll(context.WithoutCancel(ctx), b.started), closeSlots(context.WithoutCancel(ctx), b.created))
	if err != nil {
		b.problems = append(b.problems, "stopping started plugins: "+err.Error())
		b.errs = append(b.errs, err)
	}
	sort.Strings(b.problems)
	sort.Strings(b.consequences)
	problems := append(b.problems, b.consequences...)
	return &generation.BuildError{Number: b.in.Number, Problems: problems, Errs: b.errs}
}

// resolve checks the expected packages, computes the closure and records
// resolution failures, the members withheld and the failures kept from
// the previous generation.
// It returns false only when there is no closure (a malformed request);
// cascade then decides what the recorded failures mean.
func (b *build) resolve() bool {
	for _, e := range b.in.Unavailable() {
		b.problems = append(b.problems, e.Error())
		b.errs = append(b.errs, e)
	}
	cl, err := capability.Resolve(b.in.Installed.CapabilityRequest(b.in.Host, b.in.Roots))
	if err != nil {
		b.problems = append(b.problems, err.Error())
		b.errs = append(b.errs, err)
		return false
	}
	b.closure = cl
	b.members = make(map[string]*generation.Member, len(cl.Members))
	for _, p := range b.in.Installed.Packages {
		if _, in := slices.BinarySearch(cl.Members, p.Name); in { // Members are sorted
			b.members[p.Name] = generation.NewMember(&b.in, p)
		}
	}
	for _, pr := range cl.Problems {
		switch {
		case pr.Severity == capability.Warning:
			b.warnings = append(b.warnings, pr.Message)
		case b.members[pr.Package] != nil:
			b.markFailed(pr.Package, pr.Message)
		default: // an unknown or disabled root
			b.problems = append(b.problems, pr.Message)
		}
	}
	if err := cl.Err(); err != nil {
		b.errs = append(b.errs, err)
	}
	b.withhold()
	for _, name := range slices.Sorted(maps.Keys(b.in.KeepFailed)) {
		if m := b.members[name]; m != nil && m.Status != generation.StatusDeclarative {
			m.Adopted = true
			b.markFailed(name, b.in.KeepFailed[name])
		}
	}
	return true
}

// withhold leaves out the members the inputs withhold
// (generation.Inputs.Withheld) as failed members, left out of the
// generation before anything starts: cascade applies the policy.
func (b *build) withhold() {
	for _, e := range b.in.Withheld() {
		m := b.members[e.Package]
		if _, failed := b.failed[e.Package]; m == nil || failed {
			continue
		}
		b.leftOut[e.Package] = true
		b.markFailed(e.Package, generation.LeftOut(e.Reason))
		if m.Required {
			b.errs = append(b.errs, e)
		}
	}
}

// markFailed records the first reason a member failed.
func (b *build) markFailed(name, reason string) {
	if _, ok := b.failed[name]; !ok {
		b.failed[name] = reason
	}
}

// start launches every member that runs, is not failed and not adopted,
// and records each outcome. A member whose manifest's kernel range rejects
// this host's protocol fails without launching, reported starting then
// failed as the batch reports a start that fails. A required member's
// failure cancels the rest of the batch, or, when its manifest ruled it
// out, the whole batch: the build fails anyway.
func (b *build) start(ctx context.Context) {
	var specs []spec
	refused := false // a required member's manifest ruled it out
	adopt := b.adoptable()
	b.env = newSlotEnv(b.opts, hostKinds(b.in.Spec.Kinds))
	if len(b.lazy) == 0 {
		b.lazy = make(map[string]*Lazy, len(b.closure.Members))
	}
	for _, name := range b.closure.Members {
		m := b.members[name]
		if _, bad := b.failed[name]; bad || m.Status == generation.StatusDeclarative {
			continue
		}
		launch := b.in.LaunchOf(m.Package)
		lazy := launch.Activation == pluginpkg.ActivationLazy
		if b.adopt(m, adopt, lazy) {
			continue
		}
		if err := m.Package.Manifest.CheckKernel(); err != nil {
			err = &sidecar.StartError{Plugin: name, Phase: "version", Err: err}
			b.report(Event{Plugin: name, State: Starting})
			b.report(Event{Plugin: name, State: Failed, Err: err})
			b.startFailed(m, err)
			refused = refused || m.Required
			continue
		}
		own := ownOf(launch)
		if lazy && b.declare(m, own) {
			continue
		}
		specs = append(specs, spec{pkg: m.Package, opts: b.env.options(&own), own: own, cancelBatchOnFailure: m.Required, member: m, lazy: lazy})
	}
	if refused {
		return
	}
	out := startBatch(ctx, specs, batchOptions{poolSize: cmp.Or(b.opts.PoolSize, DefaultPoolSize),
		budget: cmp.Or(b.opts.Budget, DefaultBudget), onEvent: b.opts.OnEvent})
	for i, o := range out {
		m := b.members[o.plugin]
		m.Elapsed = o.elapsed
		switch o.state {
		case Ready:
			b.started = append(b.started, o.client)
			if specs[i].lazy {
				b.learned(m, specs[i].own, o)
				continue
			}
			b.clients[o.plugin] = o.client
		case Failed:
			b.startFailed(m, o.err)
		}
	}
}

// adopt takes over m's process from the previous generation when the
// kernel asked for it (Options.Adopt): an eager member's client, or a
// lazy member's slot, started or not, when it is lazy on both sides. It
// reports whether it did.
func (b *build) adopt(m *generation.Member, adopt map[string]*sidecar.Client, lazy bool) bool {
	name := m.Package.Name
	if lazy {
		z := b.adoptableSlot(name)
		if z == nil {
			return false
		}
		b.lazy[name], m.Adopted = z, true
		if m.Status = lazyStatus(z); m.Status == generation.StatusFailed {
			m.Reason = z.Err().Error()
		}
		return true
	}
	if c := adopt[name]; c != nil && b.opts.Previous.Lazy(name) == nil {
		b.clients[name] = c
		m.Adopted = true
		return true
	}
	return false
}

// adoptableSlot returns the slot of the named member in Options.Previous
// when Options.Adopt names it, nil otherwise.
func (b *build) adoptableSlot(name string) *Lazy {
	if b.opts.Previous == nil || !slices.Contains(b.opts.Adopt, name) {
		return nil
	}
	return b.opts.Previous.Lazy(name)
}

// declare publishes the lazy member m from its declarations, without a
// process: its manifest's, when it has runtime.contributes (the author's
// promise, checked at each start), else those its last handshake left in
// the cache under the same inputs. It reports false when there are none: m is
// then started with the others, to learn them.
func (b *build) declare(m *generation.Member, own ownOptions) bool {
	dv := declaredOf(m.Package)
	var d *protocol.InitializeResult
	origin, key := OriginManifest, ""
	if dv != nil {
		d = dv.decl
	} else {
		key = cacheKey(m.Package, b.env.options(&own))
		d, origin = b.opts.Cache.load(m.Package.Name, key), OriginCache
	}
	if d == nil {
		return false
	}
	z := newLazy(m.Package, b.env, own, d, origin, key)
	z.memo = dv
	b.lazy[m.Package.Name] = z
	b.created = append(b.created, z)
	m.Status = generation.StatusDeclared
	return true
}

// learned makes the slot of a lazy member started by this build to learn
// its declarations (it had none): ready, its handshake its published
// declarations, cached for the next build.
func (b *build) learned(m *generation.Member, own ownOptions, o outcome) {
	c, key := o.client, cacheKey(m.Package, b.env.options(&own))
	z := newLazy(m.Package, b.env, own, c.Declarations(), OriginHandshake, key)
	z.adoptStarted(c, o.files)
	b.lazy[m.Package.Name] = z
	b.created = append(b.created, z)
	_ = b.opts.Cache.store(m.Package.Name, key, c.Declarations())
}

// declarations returns the declarations the named member is published
// with: its handshake, or a lazy member's declared ones; nil when it does
// not run.
func (b *build) declarations(name string) *protocol.InitializeResult {
	if c := b.clients[name]; c != nil {
		return c.Declarations()
	}
	if z := b.lazy[name]; z != nil {
		return z.declared
	}
	return nil
}

// fromManifest reports whether the named member is lazy and published
// from its manifest's declarations (manifestDeclarations): what holds its
// handshake to the manifest (its version, runtime.contributes) holds by
// construction until it starts, and its start checks the rest (drift).
func (b *build) fromManifest(name string) bool {
	z := b.lazy[name]
	return z != nil && z.origin == OriginManifest
}

// startFailed records that m's start failed with err.
func (b *build) startFailed(m *generation.Member, err error) {
	name := m.Package.Name
	b.markFailed(name, err.Error())
	if m.Required {
		b.errs = append(b.errs, err)
	}
	var ae *AbortedError
	if errors.As(err, &ae) {
		b.aborted[name], b.consequence[name] = true, true
	}
}

// adoptable returns the clients Options.Adopt names, by name: those of
// Options.Previous's members that have one.
func (b *build) adoptable() map[string]*sidecar.Client {
	if b.opts.Previous == nil || len(b.opts.Adopt) == 0 {
		return nil
	}
	out := make(map[string]*sidecar.Client, len(b.opts.Adopt))
	for _, name := range b.opts.Adopt {
		if c := b.opts.Previous.Client(name); c != nil {
			out[name] = c
		}
	}
	return out
}

// report passes e to the observer, if there is one.
func (b *build) report(e Event) {
	if b.opts.OnEvent != nil {
		b.opts.OnEvent(e)
	}
}

// notCancelled reports whether ctx is still live; when it is done, the
// plugins that could not start are no optional failures and the generation
// would be incomplete, so the build fails with the cause.
func (b *build) notCancelled(ctx context.Context) bool {
	if ctx.Err() == nil {
		return true
	}
	cause := context.Cause(ctx)
	b.problems = append(b.problems, "build cancelled: "+cause.Error())
	b.errs = append(b.errs, cause)
	return false
}

// assemble builds the final value and the running set that owns its
// clients.
func (b *build) assemble(reg *contribution.Registry) *Running {
	g := generation.Assemble(b.in, b.closure, b.members, reg, b.warnings)
	for name, z := range b.lazy {
		var idle time.Duration
		if b.opts.IdleTimeout != nil {
			idle = b.opts.IdleTimeout(name)
		}
		z.SetIdle(idle)
	}
	return newRunning(g, b.clients, b.lazy)
}

// hostKinds returns the kinds of specs (a host spec's Kinds) that are not
// built in, sorted: the kinds whose contributions a handshake may declare
// in its contributions. Nil specs, the built-in kinds only, give none.
func hostKinds(specs []contribution.KindSpec) []contribution.Kind {
	var out []contribution.Kind
	for _, k := range specs {
		if !k.Kind.Builtin() && !slices.Contains(out, k.Kind) {
			out = append(out, k.Kind)
		}
	}
	slices.Sort(out)
	return out
}
