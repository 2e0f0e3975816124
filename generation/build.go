package generation

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

// Inputs is everything Build needs. Installed is required; every other zero
// field means "none" or the documented default. Inputs are data: Build asks
// the host nothing back (Observer only reports).
type Inputs struct {
	// Number is the new generation's number.
	Number uint64
	// Installed is the home as loaded by pluginpkg.LoadInstalled.
	Installed *pluginpkg.Installed
	// Host lists the capabilities the host provides.
	Host []capability.Provided
	// Roots names the packages that must run; empty means every enabled
	// package.
	Roots []string
	// Spec declares the host's points and slots, strictness and slot owners.
	Spec contribution.HostSpec
	// Launch holds each package's launch value, by name: its policy,
	// config, environment and limits. A package without an entry gets
	// DefaultLaunch. Each member carries its value, and its fingerprint
	// hashes exactly that value (a change is "config changed").
	Launch map[string]Launch
	// Expect lists the packages the host requires whatever the home says
	// (a required policy in its config; at a reload, the required members
	// of the running generation). Each must have loaded and, unless its
	// MayDisable is set, be enabled; otherwise the build fails before
	// anything starts, with an *UnavailableError per problem naming the
	// package and the file. Launch decides the policy of those that did
	// load.
	Expect []Expected
	// PoolSize bounds how many plugins start at once (zero means 4), and
	// Budget the whole start, shared by every plugin in it (zero means
	// 30s).
	PoolSize int
	Budget   time.Duration
	// Client is what every sidecar starts with; each member's Launch adds
	// its config, environment and limits.
	Client ClientOptions
	// Observer receives progress events and the sidecars' reports.
	Observer Observer
	// Previous is the generation this build succeeds, whose sidecars
	// Adopt names; nil for a first generation.
	Previous *Generation
	// Adopt names members of Previous whose sidecar the new generation
	// reuses instead of starting one (the member is Adopted). A sidecar
	// that has exited since is adopted as it is: the member stays down, as
	// it was. A name whose member in Previous has no sidecar is started as
	// usual. A failed Build never stops adopted sidecars; a successful one
	// owns them from then on (Previous must Release them).
	Adopt []string
	// KeepFailed maps package names to the reason each is not running, to
	// carry a failure over from the previous generation: Build does not
	// start them and records each as a failed (and Adopted) member with
	// that reason; failures cascade from them as from any failure, and a
	// required one fails the build. Names that are not members are
	// ignored. NewPlan classifies a down package named here as unchanged
	// unless it changed itself (see NewPlan).
	KeepFailed map[string]string
	// Plan is the plan that led to this build, recorded in the
	// generation's snapshot; nil for a first generation.
	Plan *Plan
}

// BuildError reports a generation that could not be built. Every process the
// build started has been stopped. Problems lists every reason: root causes
// first, then their consequences (plugins aborted with the batch or
// failed along requires edges), each group sorted; the underlying typed
// errors (*UnavailableError, *contribution.RegistryError, a
// *protocol.VersionError, ...) are reachable with errors.As.
type BuildError struct {
	Number   uint64
	Problems []string
	errs     []error
}

// Error lists every problem, one per line.
func (e *BuildError) Error() string {
	return fmt.Sprintf("generation %d: %d %s:\n\t%s", e.Number, len(e.Problems), plural(len(e.Problems), "problem", "problems"),
		strings.Join(e.Problems, "\n\t"))
}

// Unwrap returns the underlying errors.
func (e *BuildError) Unwrap() []error { return e.errs }

// build is the state of one Build call.
type build struct {
	in      Inputs
	closure *capability.Closure
	members map[string]*Member
	failed  map[string]string // name -> reason
	leftOut map[string]bool   // optional members left out for their declarations
	// consequence marks members failed because another failed: cascaded
	// along requires, or aborted with their batch (*sidecar.AbortedError).
	consequence  map[string]bool
	consequences []string          // problems that follow from those in problems
	aborted      map[string]bool   // members whose start was aborted with the batch
	started      []*sidecar.Client // started by this build, to stop on failure
	options      sidecar.Options   // what every client starts with (Inputs.sidecarOptions)
	problems     []string
	errs         []error
	warnings     []string
}

// Build resolves, starts and validates a new generation. On failure it
// returns a *BuildError and leaves no process it started behind; sidecars
// named by in.Adopt are never stopped by Build. A Build whose ctx is done before it
// completes fails, its BuildError wrapping context.Cause(ctx).
//
// Each step is one call: resolve the closure, cascade what failed before
// anything starts (so no dependent of a failed provider is launched), start
// the rest, cascade the start failures, check each manifest's methods
// against its handshake (checkMethods), register the contributions
// (leaving out optional plugins that break a rule, each round cascaded),
// assemble.
func Build(ctx context.Context, in Inputs) (*Generation, error) {
	b := newBuild(in)
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

func newBuild(in Inputs) *build {
	return &build{in: in, members: map[string]*Member{}, failed: map[string]string{}, leftOut: map[string]bool{},
		consequence: map[string]bool{}, aborted: map[string]bool{}, options: in.sidecarOptions()}
}

// fail stops what the build started and returns its BuildError.
func (b *build) fail(ctx context.Context) error {
	if err := sidecar.CloseAll(context.WithoutCancel(ctx), b.started); err != nil {
		b.problems = append(b.problems, "stopping started plugins: "+err.Error())
		b.errs = append(b.errs, err)
	}
	sort.Strings(b.problems)
	sort.Strings(b.consequences)
	problems := append(b.problems, b.consequences...)
	return &BuildError{Number: b.in.Number, Problems: problems, errs: b.errs}
}

// resolve checks the expected packages, computes the closure and records
// resolution failures and the failures kept from the previous generation.
// It returns false only when there is no closure (a malformed request);
// cascade then decides what the recorded failures mean.
func (b *build) resolve() bool {
	b.expect()
	cl, err := capability.Resolve(b.in.Installed.CapabilityRequest(b.in.Host, b.in.Roots))
	if err != nil {
		b.problems = append(b.problems, err.Error())
		b.errs = append(b.errs, err)
		return false
	}
	b.closure = cl
	byName := make(map[string]*pluginpkg.Package, len(b.in.Installed.Packages))
	for _, p := range b.in.Installed.Packages {
		byName[p.Name] = p
	}
	for _, name := range cl.Members {
		b.members[name] = newMember(byName[name], &b.in, StatusRunning)
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
	for _, name := range slices.Sorted(maps.Keys(b.in.KeepFailed)) {
		if m := b.members[name]; m != nil && m.Status != StatusDeclarative {
			m.Adopted = true
			b.markFailed(name, b.in.KeepFailed[name])
		}
	}
	return true
}

// markFailed records the first reason a member failed.
func (b *build) markFailed(name, reason string) {
	if _, ok := b.failed[name]; !ok {
		b.failed[name] = reason
	}
}

// start launches every member that runs, is not failed and not adopted,
// and records each outcome. A member whose manifest rules out a start
// (checkManifest) fails without launching, reported starting then failed
// as the batch reports a start that fails. A required member's failure
// cancels the rest of the batch, or, when its manifest ruled it out, the
// whole batch: the build fails anyway.
func (b *build) start(ctx context.Context) {
	var specs []sidecar.Spec
	refused := false // a required member's manifest ruled it out
	adopt := b.adoptable()
	for _, name := range b.closure.Members {
		m := b.members[name]
		if _, bad := b.failed[name]; bad || m.Status == StatusDeclarative {
			continue
		}
		if c := adopt[name]; c != nil {
			m.setClient(c)
			m.Adopted = true
			continue
		}
		if err := checkManifest(m.Package); err != nil {
			b.report(StartEvent{Plugin: name, State: StartLaunching})
			b.report(StartEvent{Plugin: name, State: StartFailed, Err: err})
			b.startFailed(m, err)
			refused = refused || m.Required
			continue
		}
		specs = append(specs, sidecar.Spec{Plugin: sidecarPlugin(m.Package, b.in.Spec.Kinds), Options: memberOptions(b.options, m.launch),
			CancelBatchOnFailure: m.Required})
	}
	if refused {
		return
	}
	out := sidecar.StartBatch(ctx, specs, sidecar.BatchOptions{PoolSize: b.in.PoolSize, Budget: b.in.Budget,
		OnEvent: b.progress})
	for _, o := range out {
		m := b.members[o.Plugin]
		m.Elapsed = o.Elapsed
		switch o.State {
		case sidecar.StartReady:
			m.setClient(o.Client)
			b.started = append(b.started, o.Client)
		case sidecar.StartFailed:
			b.startFailed(m, o.Err)
		}
	}
}

// startFailed records that m's start failed with startErr.
func (b *build) startFailed(m *Member, startErr error) {
	name := m.Package.Name
	err := b.abortedByRequired(startErr)
	b.markFailed(name, err.Error())
	if m.Required {
		b.errs = append(b.errs, err)
	}
	if err != startErr {
		b.aborted[name], b.consequence[name] = true, true
	}
}

// adoptable returns the sidecars in.Adopt names, by name: those of
// in.Previous's members that have one.
func (b *build) adoptable() map[string]*sidecar.Client {
	if b.in.Previous == nil || len(b.in.Adopt) == 0 {
		return nil
	}
	out := make(map[string]*sidecar.Client, len(b.in.Adopt))
	for _, name := range b.in.Adopt {
		if m := b.in.Previous.Member(name); m != nil && m.client() != nil {
			out[name] = m.client()
		}
	}
	return out
}

// progress forwards a batch event to the observer, in the build's words.
func (b *build) progress(e sidecar.StartEvent) {
	if b.in.Observer.OnEvent == nil {
		return
	}
	if e.Err != nil {
		e.Err = b.abortedByRequired(e.Err)
	}
	b.report(StartEvent{Plugin: e.Plugin, State: StartState(e.State), Elapsed: e.Elapsed, Err: e.Err})
}

// report passes e to the observer, if it has OnEvent.
func (b *build) report(e StartEvent) {
	if b.in.Observer.OnEvent != nil {
		b.in.Observer.OnEvent(e)
	}
}

// abortedByRequired words the failure of a plugin whose start was aborted
// with its batch: a required member's failure cancelled it. Any other
// error is returned as it is.
func (b *build) abortedByRequired(err error) error {
	var ae *sidecar.AbortedError
	if !errors.As(err, &ae) {
		return err
	}
	return &abortedError{ae}
}

// abortedError is a member's start aborted because a required member failed.
type abortedError struct{ *sidecar.AbortedError }

func (e *abortedError) Error() string {
	return fmt.Sprintf("not started: required plugin %q failed", e.CancelledBy)
}

func (e *abortedError) Unwrap() error { return e.AbortedError }

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

func remove(cs []*sidecar.Client, c *sidecar.Client) []*sidecar.Client {
	out := cs[:0]
	for _, x := range cs {
		if x != c {
			out = append(out, x)
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// assemble builds the final value.
func (b *build) assemble(reg *contribution.Registry) *Generation {
	g := &Generation{number: b.in.Number, created: time.Now(), closure: b.closure, registry: reg,
		byName: b.members, plan: b.in.Plan}
	for _, name := range b.closure.Members {
		g.members = append(g.members, b.members[name])
	}
	for _, w := range b.in.Installed.Warnings {
		b.warnings = append(b.warnings, w.String())
	}
	sort.Strings(b.warnings)
	g.warnings = b.warnings
	g.inputs = fingerprints(g.members)
	g.hash = hashInputs(g.inputs, b.in)
	return g
}
