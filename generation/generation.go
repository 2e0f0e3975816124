package generation

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
)

// MemberStatus is the outcome of one package in a generation.
type MemberStatus string

// Package statuses.
const (
	// StatusRunning: the sidecar started and completed its handshake (as
	// of the build: whether it still runs is the running set's to say,
	// see Snapshot).
	StatusRunning MemberStatus = "running"
	// StatusDeclarative: the package has no runtime; nothing runs.
	StatusDeclarative MemberStatus = "declarative"
	// StatusFailed: the package failed (or cascaded from a failure) and is
	// optional; the generation runs without it.
	StatusFailed MemberStatus = "failed"
	// StatusDeclared: a lazy member, published from its declarations (its
	// manifest's, or those its last handshake left in the declaration
	// cache) without a process: it starts on first use (as of the build:
	// the running set says whether it has started since).
	StatusDeclared MemberStatus = "declared"
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
	Reason string
	// Elapsed is how long its start took (zero when it did not start).
	Elapsed time.Duration
	lazy    string           // its launch value's lazyName
	config  string           // its launch value's digest (Fingerprint.Config)
	fp      *fingerprintOnce // its fingerprint, computed once; nil for a Member made without NewMember
}

// fingerprintOnce holds a member's fingerprint, computed at the first
// call of Member.Fingerprint.
type fingerprintOnce struct {
	once sync.Once
	fp   Fingerprint
}

// Fingerprint returns what identifies the member's inputs (Fingerprint):
// its package's version, manifest, files and command by content, its
// launch value and its policy, as the files are at the first call; a lazy
// member's leaves its files and command out (Fingerprint.WithFiles). For a
// member made by NewMember it is computed once, by the first caller
// (concurrent callers wait for it), and Assemble records that value: a
// builder that calls it before the member's process starts records the
// files the process was started from, and overlaps the file-system calls
// with the start. A Member made otherwise computes it at every call. The
// FileDigests map is shared: callers MUST NOT modify it.
func (m *Member) Fingerprint() Fingerprint {
	if m.fp == nil {
		return packageFingerprint(m)
	}
	m.fp.once.Do(func() { m.fp.fp = packageFingerprint(m) })
	return m.fp.fp
}

// NewMember returns the member for p under in: required as in's launch
// value for p says (LaunchOf), StatusRunning, or StatusDeclarative for a
// package without runtime. Whoever builds the generation sets its outcome.
func NewMember(in *Inputs, p *pluginpkg.Package) *Member {
	return newMember(p, in, StatusRunning)
}

// newMember returns the member for p under in, with its launch value.
func newMember(p *pluginpkg.Package, in *Inputs, status MemberStatus) *Member {
	l := in.LaunchOf(p)
	a := &struct { // one allocation for the member and its fingerprint
		m  Member
		fp fingerprintOnce
	}{}
	m := &a.m
	*m = Member{Package: p, Required: l.Required && p.Manifest.Runtime != nil, Status: status, lazy: l.lazyName(),
		config: launchDigest(l), fp: &a.fp}
	if p.Manifest.Runtime == nil {
		m.Status = StatusDeclarative
	}
	return m
}

// Generation is one runtime generation: an immutable value, safe for
// concurrent use. It owns no process: the plugins it describes are run by
// whoever built it (package kernel, for a host), and a holder of a
// Generation can read it, never stop them. Create it with Assemble.
type Generation struct {
	number   uint64
	created  time.Time
	closure  *capability.Closure
	members  []*Member // name order
	byName   map[string]*Member
	registry *contribution.Registry
	warnings []string
	hash     string
	inputs   []Fingerprint // members' fingerprints, in members' order
	plan     *Plan         // the plan that produced it, or nil

	snapOnce sync.Once
	snap     *Snapshot // built once, by Snapshot
}

// Assemble returns the generation built from in: its closure, its members
// with their outcomes (by name; every member of the closure), the registry
// validated from the running members' declarations and the warnings of
// the build (the load warnings of in.Installed are added here). Members
// and registry are the generation's from then on: the caller MUST NOT
// modify them.
func Assemble(in Inputs, cl *capability.Closure, members map[string]*Member, reg *contribution.Registry, warnings []string) *Generation {
	g := &Generation{number: in.Number, created: time.Now(), closure: cl, registry: reg, byName: members, plan: in.Plan}
	g.members = make([]*Member, len(cl.Members))
	for i, name := range cl.Members {
		g.members[i] = members[name]
	}
	for _, w := range in.Installed.Warnings {
		warnings = append(warnings, w.String())
	}
	for name, problems := range in.Kept {
		if m := members[name]; m != nil {
			warnings = append(warnings, fmt.Sprintf("plugin %q is %s", name, keptReason(m.Package.Manifest.Version.String(), problems)))
		}
	}
	g.warnings = append([]string(nil), warnings...)
	sort.Strings(g.warnings)
	g.inputs = fingerprints(g.members)
	g.hash = hashInputs(cl.Members, g.inputs, in) // the members' names, in their order
	return g
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

// Hash is the generation's identity: the hex sha256 of its inputs, every
// member's name, version, manifest, package files and command (by
// content), launch value (config, environment with secrets as digests,
// limits, confinement) and policy, and the host's spec (capabilities,
// points, slots, owners, roots, strict mode, kinds). It holds no path,
// time or generation number: hosts with the same inputs get the same
// hash wherever their homes lie (docs/snapshot.md, "Generation hash").
// Two generations with equal hashes were built from the same inputs.
func (g *Generation) Hash() string { return g.hash }
