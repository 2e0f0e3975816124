package generation

import (
	"context"
	"sync"
	"time"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/access"
	"github.com/extkernel/extkernel/internal/sidecar"
	"github.com/extkernel/extkernel/pluginpkg"
)

// MemberStatus is the outcome of one package in a generation.
type MemberStatus string

// Package statuses.
const (
	// StatusRunning: the sidecar started and completed its handshake.
	StatusRunning MemberStatus = "running"
	// StatusDeclarative: the package has no runtime; nothing runs.
	StatusDeclarative MemberStatus = "declarative"
	// StatusFailed: the package failed (or cascaded from a failure) and is
	// optional; the generation runs without it.
	StatusFailed MemberStatus = "failed"
)

// Member is one package of the closure and its outcome.
type Member struct {
	Package *pluginpkg.Package
	// Required is the policy applied: Launch.Required, for a package with
	// a runtime.
	Required bool
	Status   MemberStatus
	// Adopted is set when the member was taken over from the previous
	// generation instead of started: its client (Inputs.Adopt), or its
	// failure (Inputs.KeepFailed).
	Adopted bool
	// Reason explains a failure, for StatusFailed.
	Reason  string
	Elapsed time.Duration
	client  *sidecar.Client
	launch  Launch // what its sidecar is given, as fingerprinted
}

// newMember returns the member for p under in, with its launch value.
func newMember(p *pluginpkg.Package, in *Inputs, status MemberStatus) *Member {
	l := in.launch(p)
	m := &Member{Package: p, Required: l.Required && p.Manifest.Runtime != nil, Status: status, launch: l}
	if p.Manifest.Runtime == nil {
		m.Status = StatusDeclarative
	}
	return m
}

// Client returns the member's sidecar, or nil when it does not run. It is
// for the kernel only: a call through it would skip the kernel's leases and
// drain rules, so it takes a token that only this module holds (hosts read
// a plugin's PID and state from kernel.Plugins). It panics without it.
func (m *Member) Client(tok access.Token) *sidecar.Client {
	tok.Check("generation: Member.Client")
	return m.client
}

// Generation is one immutable runtime generation. Create it with Build.
type Generation struct {
	number   uint64
	created  time.Time
	closure  *capability.Closure
	members  []*Member // name order
	byName   map[string]*Member
	registry *contribution.Registry
	warnings []string
	hash     string
	inputs   map[string]Fingerprint
	plan     *Plan // the plan that produced it, or nil

	snapOnce sync.Once
	snap     *Snapshot // built once, by Snapshot

	closeOnce sync.Once
	closeErr  error
	mu        sync.Mutex
	released  map[string]bool // under mu: clients handed to a successor
}

// Number is the generation's number, increasing by one per published
// generation of a kernel.
func (g *Generation) Number() uint64 { return g.number }

// Created is when the build finished.
func (g *Generation) Created() time.Time { return g.created }

// Closure is the resolved capability closure the generation was built from.
func (g *Generation) Closure() *capability.Closure { return g.closure }

// Members returns the closure's packages and their outcomes in name order.
// The slice is shared: callers must not modify it.
func (g *Generation) Members() []*Member { return g.members }

// Member returns the named member, or nil.
func (g *Generation) Member(name string) *Member { return g.byName[name] }

// Client returns the running sidecar of the named plugin, or nil. Like
// Member.Client it is for the kernel only, and panics without its token.
func (g *Generation) Client(tok access.Token, name string) *sidecar.Client {
	tok.Check("generation: Generation.Client")
	if m := g.byName[name]; m != nil {
		return m.client
	}
	return nil
}

// Registry is the validated contribution snapshot.
func (g *Generation) Registry() *contribution.Registry { return g.registry }

// Warnings lists everything that did not stop the build, sorted: failed
// optional plugins, unsatisfied optional requirements, cycles, unknown
// points or slots in lenient mode, overridden slot claims, load warnings.
func (g *Generation) Warnings() []string { return append([]string(nil), g.warnings...) }

// Hash is the hex sha256 of the generation's inputs: every member's
// manifest, package files and command (by content), effective config and
// policy, and the host's spec. Two generations with equal hashes were built
// from the same inputs.
func (g *Generation) Hash() string { return g.hash }

// Fingerprints returns each member's input fingerprint, by name. The map is
// a copy.
func (g *Generation) Fingerprints() map[string]Fingerprint {
	out := make(map[string]Fingerprint, len(g.inputs))
	for k, v := range g.inputs {
		out[k] = v
	}
	return out
}

// Clients returns the running clients in name order. Like Member.Client
// it is for the kernel only, and panics without its token.
func (g *Generation) Clients(tok access.Token) []*sidecar.Client {
	tok.Check("generation: Generation.Clients")
	var out []*sidecar.Client
	for _, m := range g.members {
		if m.client != nil {
			out = append(out, m.client)
		}
	}
	return out
}

// Close stops every client the generation still owns (all but the
// released ones), in parallel, and returns their errors joined. It is
// idempotent.
func (g *Generation) Close(ctx context.Context) error {
	g.closeOnce.Do(func() {
		g.mu.Lock()
		var owned []*sidecar.Client
		for _, m := range g.members {
			if m.client != nil && !g.released[m.Package.Name] {
				owned = append(owned, m.client)
			}
		}
		g.mu.Unlock()
		g.closeErr = sidecar.CloseAll(ctx, owned)
	})
	return g.closeErr
}

// Release gives up ownership of the named clients without stopping them,
// because a successor generation adopted them: Close then stops only the
// others. The members keep their clients, so calls still in flight on this
// generation are unaffected. Release must be called before Close.
func (g *Generation) Release(names ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released == nil {
		g.released = map[string]bool{}
	}
	for _, n := range names {
		g.released[n] = true
	}
}
