package generation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

// Inputs is everything Build needs. Installed and Start are required; every
// other zero field means "none" or the documented default.
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
	// Required decides the policy per package; nil means the manifest's
	// runtime.required.
	Required func(*pluginpkg.Package) bool
	// Expect lists the packages the host requires whatever the home says
	// (a required policy in its config; at a reload, the required members
	// of the running generation). Each must have loaded and, unless its
	// MayDisable is set, be enabled; otherwise the build fails before
	// anything starts, with an *UnavailableError per problem naming the
	// package and the file. Required decides the policy of those that did
	// load.
	Expect []Expected
	// Config returns a package's effective configuration; nil means none.
	Config func(name string) json.RawMessage
	// Extra returns further host-side inputs of a package that its
	// sidecar depends on but that are not sent as config (such as the
	// environment the host adds, secrets masked); nil means none. They
	// count as config in fingerprints ("config changed").
	Extra func(name string) []byte
	// Start configures the pool, the startup budget, client options and
	// progress events. Its Required and Config fields are set by Build. A
	// member reported ready and then removed by the build (left out for its
	// declarations, or failed along requires) is reported again through
	// Start.OnEvent, as failed with its reason.
	Start sidecar.ManagerOptions
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
// underlying typed errors (*sidecar.RequiredStartError,
// *contribution.BuildError, ...) are reachable with errors.As.
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
	pkgs    map[string]*pluginpkg.Package
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
func Build(ctx context.Context, in Inputs) (*Generation, error) {
	b := newBuild(in)
	steps := []func(context.Context) bool{b.resolve, b.start, b.cascadeStarted}
	for _, step := range steps {
		if !step(ctx) {
			return nil, b.fail(ctx)
		}
	}
	if ctx.Err() != nil {
		// Cancelled: the plugins that could not start are no optional
		// failures, and the generation would be incomplete.
		cause := context.Cause(ctx)
		b.problems = append(b.problems, "build cancelled: "+cause.Error())
		b.errs = append(b.errs, cause)
		return nil, b.fail(ctx)
	}
	reg, ok := b.registry(ctx)
	if !ok {
		return nil, b.fail(ctx)
	}
	return b.generation(reg), nil
}

func newBuild(in Inputs) *build {
	return &build{in: in, pkgs: map[string]*pluginpkg.Package{}, members: map[string]*Member{},
		failed: map[string]string{}, leftOut: map[string]bool{}, consequence: map[string]bool{}, aborted: map[string]bool{}}
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

func (b *build) required(p *pluginpkg.Package) bool {
	if p.Manifest.Runtime == nil {
		return false
	}
	if b.in.Required != nil {
		return b.in.Required(p)
	}
	return p.Manifest.Runtime.Required
}

// resolve checks the expected packages, computes the closure and records
// resolution failures. A required package that cannot be loaded or resolved
// fails the build before anything starts.
func (b *build) resolve(context.Context) bool {
	b.expect()
	req := capability.Request{Host: b.in.Host, Roots: b.in.Roots}
	for _, p := range b.in.Installed.Packages {
		b.pkgs[p.Name] = p
		req.Packages = append(req.Packages, p.Capability())
	}
	cl, err := capability.Resolve(req)
	if err != nil {
		b.problems = append(b.problems, err.Error())
		b.errs = append(b.errs, err)
		return false
	}
	b.closure = cl
	for _, name := range cl.Members {
		p := b.pkgs[name]
		b.members[name] = &Member{Package: p, Required: b.required(p), Status: StatusRunning}
		if p.Manifest.Runtime == nil {
			b.members[name].Status = StatusDeclarative
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
	for _, name := range sortedNames(b.in.KeepFailed) {
		if m := b.members[name]; m != nil && m.Status != StatusDeclarative {
			m.Adopted = true
			b.markFailed(name, b.in.KeepFailed[name])
		}
	}
	b.cascade()
	return b.checkRequired()
}

// markFailed records the first reason a member failed.
func (b *build) markFailed(name, reason string) {
	if _, ok := b.failed[name]; !ok {
		b.failed[name] = reason
	}
}

// checkRequired turns every failed required member into a problem, a
// consequence when it failed because another did, and reports whether the
// build may go on.
func (b *build) checkRequired() bool {
	for _, name := range sortedNames(b.failed) {
		if !b.members[name].Required {
			continue
		}
		msg := fmt.Sprintf("required plugin %q failed: %s", name, b.failed[name])
		switch {
		case b.aborted[name]:
			b.consequences = append(b.consequences, fmt.Sprintf("required plugin %q %s", name, b.failed[name]))
		case b.consequence[name]:
			b.consequences = append(b.consequences, msg)
		default:
			b.problems = append(b.problems, msg)
		}
	}
	return len(b.problems)+len(b.consequences) == 0
}

// start launches every member that runs, is not failed and not adopted.
func (b *build) start(ctx context.Context) bool {
	var todo []*pluginpkg.Package
	for _, name := range b.closure.Members {
		m := b.members[name]
		if _, bad := b.failed[name]; bad || m.Status == StatusDeclarative {
			continue
		}
		if c := b.in.Adopt[name]; c != nil {
			m.client, m.Adopted = c, true
			continue
		}
		todo = append(todo, m.Package)
	}
	opts := b.in.Start
	opts.Required = b.required
	if b.in.Config != nil {
		opts.Config = func(p *pluginpkg.Package) json.RawMessage { return b.in.Config(p.Name) }
	}
	batch, err := sidecar.NewManager(opts).Start(ctx, todo)
	if batch != nil {
		b.collect(batch)
	}
	var rse *sidecar.RequiredStartError
	if errors.As(err, &rse) {
		b.errs = append(b.errs, err)
		b.started = nil // the manager stopped the whole batch
		b.cascade()
		return b.checkRequired()
	}
	if err != nil {
		b.problems = append(b.problems, "starting plugins: "+err.Error())
		b.errs = append(b.errs, err)
		return false
	}
	return true
}

// collect records each result of a batch start.
func (b *build) collect(batch *sidecar.Batch) {
	for _, r := range batch.Results {
		m := b.members[r.Package.Name]
		m.Elapsed = r.Elapsed
		switch r.State {
		case sidecar.StateReady:
			m.client = r.Client
			b.started = append(b.started, r.Client)
		case sidecar.StateFailed:
			b.markFailed(r.Package.Name, r.Err.Error())
			var ae *sidecar.AbortedError
			if errors.As(r.Err, &ae) {
				b.aborted[r.Package.Name], b.consequence[r.Package.Name] = true, true
			}
		}
	}
}

// cascadeStarted propagates failures (of a start, or of a plugin left out
// for its declarations) along requires edges, stops the clients of optional
// members that failed, and fails the build if a required member failed. It
// may run again after more members failed; each member is handled once.
func (b *build) cascadeStarted(ctx context.Context) bool {
	b.cascade()
	if !b.checkRequired() {
		return false
	}
	var stop []*sidecar.Client
	for _, name := range sortedNames(b.failed) {
		m := b.members[name]
		if m.Status == StatusFailed {
			continue
		}
		m.Status, m.Reason = StatusFailed, b.failed[name]
		b.warnings = append(b.warnings, b.failureWarning(name))
		if m.client != nil && !m.Adopted && b.in.Start.OnEvent != nil {
			// Reported ready by its start: say it is gone again.
			b.in.Start.OnEvent(sidecar.Event{Plugin: name, State: sidecar.StateFailed, Err: errors.New(m.Reason)})
		}
		if m.client != nil && !m.Adopted {
			stop = append(stop, m.client)
			b.started = remove(b.started, m.client)
		}
		m.client = nil
	}
	if err := sidecar.CloseAll(context.WithoutCancel(ctx), stop); err != nil {
		b.warnings = append(b.warnings, "stopping failed optional plugins: "+err.Error())
	}
	return true
}

// cascade marks failed every member whose non-optional requirement's chosen
// provider failed, transitively, with the chain in its reason.
func (b *build) cascade() {
	dependents := map[string][]capability.Choice{}
	for _, c := range b.closure.Choices {
		if !c.Requirement.Optional && c.Provider != capability.HostProvider {
			dependents[c.Provider] = append(dependents[c.Provider], c)
		}
	}
	queue := sortedNames(b.failed)
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		for _, c := range dependents[name] {
			if _, done := b.failed[c.Package]; done {
				continue
			}
			b.failed[c.Package] = fmt.Sprintf("requires %s %s, provided by %q, which failed: %s",
				c.Requirement.Key, c.Requirement.Constraint, name, b.failed[name])
			b.consequence[c.Package] = true
			queue = append(queue, c.Package)
		}
	}
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

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// generation assembles the final value.
func (b *build) generation(reg *contribution.Registry) *Generation {
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
	g.inputs = fingerprints(g.members, b.in)
	g.hash = hashInputs(g.inputs, b.in)
	return g
}
