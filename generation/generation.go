package generation

import (
	"context"
	"sync"
	"time"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/clients"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
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
	// generation instead of started: its sidecar (Inputs.Adopt), or its
	// failure (Inputs.KeepFailed).
	Adopted bool
	// Reason explains a failure, for StatusFailed.
	Reason  string
	Elapsed time.Duration
	launch  Launch // what its sidecar is given, as fingerprinted
	// clientHolder holds the member's sidecar, nil when it does not run:
	// only this module reaches it (package clients), so that every call
	// to a plugin goes through the kernel's leases.
	clientHolder
}

// clientHolder is embedded under this name so that no exported field or
// method of Member names it.
type clientHolder = clients.Holder

// client returns the member's sidecar, or nil.
func (m *Member) client() *sidecar.Client { return clients.Of(m) }

// setClient makes c the member's sidecar (nil: none).
func (m *Member) setClient(c *sidecar.Client) { clients.Set(m, c) }

// newMember returns the member for p under in, with its launch value.
func newMember(p *pluginpkg.Package, in *Inputs, status MemberStatus) *Member {
	l := in.launch(p)
	m := &Member{Package: p, Required: l.Required && p.Manifest.Runtime != nil, Status: status, launch: l}
	if p.Manifest.Runtime == nil {
		m.Status = StatusDeclarative
	}
	return m
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

// Close stops every client the generation still owns (all but the
// released ones), in parallel, and returns their errors joined. It is
// idempotent.
func (g *Generation) Close(ctx context.Context) error {
	g.closeOnce.Do(func() {
		g.mu.Lock()
		var owned []*sidecar.Client
		for _, m := range g.members {
			if c := m.client(); c != nil && !g.released[m.Package.Name] {
				owned = append(owned, c)
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
