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
	"github.com/extkernel/extkernel/internal/sidecar"
	"github.com/extkernel/extkernel/pluginpkg"
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
	// PoolSize and Budget bound the start (sidecar.BatchOptions); zero
	// means the sidecar defaults.
	PoolSize int
	Budget   time.Duration
	// Client is the Options every client starts with. Build replaces its
	// Config, Env and Limits with the member's Launch, and its OnCrash,
	// OnHealth and OnNotify with Observer's.
	Client sidecar.Options
	// Observer receives progress events and the clients' reports.
	Observer Observer
	// Adopt maps package names to clients to reuse instead of starting
	// (the member is Adopted). A client that has exited since is adopted
	// as it is: the member stays down, as it was. A failed Build never
	// stops them.
	Adopt map[string]*sidecar.Client
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
// failed along requires edges), each group sorted; the
// underlying typed errors (*sidecar.StartError, *UnavailableError,
// *contribution.RegistryError, ...) are reachable with errors.As.
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
	problems     []string
	errs         []error
	warnings     []string
}

// Build resolves, starts and validates a new generation. On failure it
// returns a *BuildError and leaves no process it started behind; clients in
// in.Adopt are never stopped by Build. A Build whose ctx is done before it
// completes fails, its BuildError wrapping context.Cause(ctx).
//
// Each step is one call: resolve the closure, cascade what failed before
// anything starts (so no dependent of a failed provider is launched), start
// the rest, cascade the start failures, register the contributions (leaving
// out optional plugins that break a rule, each round cascaded), assemble.
func Build(ctx context.Context, in Inputs) (*Generation, error) {
	b := newBuild(in)
	if !b.resolve() || !b.cascade(ctx) {
		return nil, b.fail(ctx)
	}
	b.start(ctx)
	if !b.cascade(ctx) || !b.notCancelled(ctx) {
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
		consequence: map[string]bool{}, aborted: map[string]bool{}}
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
	for _, name := range b.closure.Members {
		m := b.members[name]
		if _, bad := b.failed[name]; bad || m.Status == StatusDeclarative {
			continue
		}
		if c := b.in.Adopt[name]; c != nil {
			m.client, m.Adopted = c, true
			continue
		}
		if err := checkManifest(m.Package); err != nil {
			b.progress(sidecar.StartEvent{Plugin: name, State: sidecar.StartLaunching})
			b.progress(sidecar.StartEvent{Plugin: name, State: sidecar.StartFailed, Err: err})
			b.startFailed(m, err)
			refused = refused || m.Required
			continue
		}
		specs = append(specs, sidecar.Spec{Plugin: sidecarPlugin(m.Package), Options: b.in.clientOptions(m.launch),
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
			m.client = o.Client
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

// progress forwards a batch event to the observer, in the build's words.
func (b *build) progress(e sidecar.StartEvent) {
	if b.in.Observer.OnEvent == nil {
		return
	}
	if e.Err != nil {
		e.Err = b.abortedByRequired(e.Err)
	}
	b.in.Observer.OnEvent(e)
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
