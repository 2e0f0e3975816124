package builder

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"sort"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/sidecar"
)

// build is the state of one Build call.
type build struct {
	in      generation.Inputs
	opts    Options
	closure *capability.Closure
	members map[string]*generation.Member
	clients map[string]*sidecar.Client // the members that run, by name
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
	b := &build{in: in, opts: o, members: map[string]*generation.Member{}, clients: map[string]*sidecar.Client{},
		failed: map[string]string{}, leftOut: map[string]bool{}, consequence: map[string]bool{}, aborted: map[string]bool{}}
	if !b.resolve() || !b.cascade(ctx) {
		return nil, b.fail(ctx)
	}
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
	if err := CloseAll(context.WithoutCancel(ctx), b.started); err != nil {
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
	for _, p := range b.in.Installed.Packages {
		if slices.Contains(cl.Members, p.Name) {
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
	kinds := hostKinds(b.in.Spec.Kinds)
	for _, name := range b.closure.Members {
		m := b.members[name]
		if _, bad := b.failed[name]; bad || m.Status == generation.StatusDeclarative {
			continue
		}
		if c := adopt[name]; c != nil {
			b.clients[name] = c
			m.Adopted = true
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
		specs = append(specs, spec{pkg: m.Package, opts: b.memberOptions(m, kinds), cancelBatchOnFailure: m.Required})
	}
	if refused {
		return
	}
	out := startBatch(ctx, specs, batchOptions{poolSize: cmp.Or(b.opts.PoolSize, DefaultPoolSize),
		budget: cmp.Or(b.opts.Budget, DefaultBudget), onEvent: b.opts.OnEvent})
	for _, o := range out {
		m := b.members[o.plugin]
		m.Elapsed = o.elapsed
		switch o.state {
		case Ready:
			b.clients[o.plugin] = o.client
			b.started = append(b.started, o.client)
		case Failed:
			b.startFailed(m, o.err)
		}
	}
}

// memberOptions returns the options m's client starts with: the build's
// common ones with m's launch value and the host's kinds.
func (b *build) memberOptions(m *generation.Member, kinds []contribution.Kind) sidecar.Options {
	o, l := b.opts.Client, b.in.LaunchOf(m.Package)
	o.Config, o.Env, o.Limits, o.Kinds, o.Confinement = l.Config, l.Env, l.Limits, kinds, l.Confinement
	return o
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
	return newRunning(g, b.clients)
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
