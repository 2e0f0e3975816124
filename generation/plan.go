package generation

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
)

// Class is what a plan does with one package.
type Class string

// Package classes. Every package of either side is exactly one of them.
const (
	// ClassUnchanged: its running sidecar is adopted, not restarted; a
	// package that is down and kept down (Inputs.KeepFailed) stays down,
	// and its Reasons say why.
	ClassUnchanged Class = "unchanged"
	// ClassAdded: it is new to the closure and will be started.
	ClassAdded Class = "added"
	// ClassRemoved: it leaves the closure; its sidecar is stopped after the
	// swap.
	ClassRemoved Class = "removed"
	// ClassReloaded: something it depends on changed (Reasons say what); a
	// new sidecar is started and the old one stopped after the swap.
	ClassReloaded Class = "reloaded"
)

// Change is one package's class in a plan, with the reason for each reload
// (or, for an unchanged package kept down, why it is not started).
type Change struct {
	Name    string   `json:"name"`
	Class   Class    `json:"class"`
	Reasons []string `json:"reasons,omitempty"`
	From    string   `json:"from_version,omitempty"`
	To      string   `json:"to_version,omitempty"`
	// Activation is "lazy" when the package is (or would be) a lazy member
	// of the newer side: published from its declarations, started on
	// first use; empty for an eager one.
	Activation string `json:"activation,omitempty"`
}

// ChainDiff is the effective interceptor order at one point before and
// after, as plugin names.
type ChainDiff struct {
	Point   string   `json:"point"`
	Before  []string `json:"before"`
	After   []string `json:"after"`
	Changed bool     `json:"changed"`
}

// SlotDiff is a slot's owner before and after ("" = the host default).
type SlotDiff struct {
	Slot    string `json:"slot"`
	Before  string `json:"before"`
	After   string `json:"after"`
	Changed bool   `json:"changed"`
}

// Plan is the difference between a generation (as a Snapshot) and what disk
// and config now ask for, or between two snapshots (Diff). It is computed
// without starting anything.
type Plan struct {
	// From and To are generation numbers; To is 0 for a plan of a
	// generation not built yet.
	From     uint64   `json:"from_generation"`
	To       uint64   `json:"to_generation,omitempty"`
	Packages []Change `json:"packages"`
	// Interceptors and Slots are the contribution-level diff. In a plan,
	// After is predicted: unchanged plugins keep their handshake
	// declarations, added and reloaded ones are predicted from their
	// manifest claims (see Pending).
	Interceptors []ChainDiff `json:"interceptors"`
	Slots        []SlotDiff  `json:"slots"`
	// Problems would fail the build (resolution errors of required
	// packages, slot conflicts between claims); Warnings would not.
	Problems []string `json:"problems"`
	Warnings []string `json:"warnings"`
	// Pending says what is known only after the handshake.
	Pending []string `json:"pending"`
	// FromHash and ToHash are the input hashes of both sides.
	FromHash string `json:"from_hash"`
	ToHash   string `json:"to_hash"`
}

// Changed reports whether applying the plan would change anything: a
// package that is not unchanged, or different inputs (host spec, policy).
func (p *Plan) Changed() bool {
	if p.FromHash != p.ToHash {
		return true
	}
	for _, c := range p.Packages {
		if c.Class != ClassUnchanged {
			return true
		}
	}
	return false
}

// Diff compares two snapshots with the same classification rules as a
// plan; both sides' contributions are real (from handshakes).
func Diff(a, b *Snapshot) *Plan {
	p := &Plan{From: a.Generation, To: b.Generation, FromHash: a.Hash, ToHash: b.Hash,
		Problems: []string{}, Warnings: []string{}, Pending: []string{}}
	p.Packages = classify(a, b, nil, nil)
	p.Interceptors, p.Slots = contributionDiff(a.Contributions, b.Contributions)
	return p
}

// NewPlan compares the generation described by from with what in (disk and
// config) now asks for, without starting anything. in.Previous, in.Adopt,
// in.Client, in.Observer and in.Number are ignored. A package of from that is down
// (failed or crashed) is reloaded, to be started again, unless
// in.KeepFailed names it and it did not change itself: then it is
// unchanged, its one reason says "not running in generation N (...); kept
// down: " and the KeepFailed reason, and a change of what it depends on
// does not reload it.
func NewPlan(from *Snapshot, in Inputs) (*Plan, error) {
	return newPlan(from, in, nil)
}

// newPlan is NewPlan; reclass, if not nil, may change the classes before
// the contributions are predicted.
func newPlan(from *Snapshot, in Inputs, reclass func([]Change)) (*Plan, error) {
	to, cl, err := desired(in, carried(from, in), from)
	if err != nil {
		return nil, err
	}
	p := &Plan{From: from.Generation, FromHash: from.Hash, ToHash: to.Hash,
		Problems: []string{}, Warnings: []string{}, Pending: []string{}}
	p.Packages = classify(from, to, in.KeepFailed, in.Kept)
	if reclass != nil {
		reclass(p.Packages)
	}
	for _, c := range p.Packages {
		if _, ok := in.Kept[c.Name]; ok && c.Class == ClassUnchanged && len(c.Reasons) == 1 {
			p.Warnings = append(p.Warnings, fmt.Sprintf("plugin %q is %s", c.Name, c.Reasons[0]))
		}
	}
	manifests := make(map[string]*pluginpkg.Manifest, len(in.Installed.Packages))
	for _, pkg := range in.Installed.Packages {
		manifests[pkg.Name] = pkg.Manifest
	}
	p.predict(from, to, manifests, in.Kept)
	out := map[string]string{}
	for _, e := range in.Withheld() {
		if to.pkg(e.Package) != nil {
			out[e.Package] = joinRules(out[e.Package], e.Reason)
		}
	}
	gone := map[string]string{}
	p.leaveOut(to, cl, out, gone)
	p.register(to, in.Spec, cl, gone)
	p.resolutionProblems(cl, to)
	for _, e := range in.Unavailable() {
		p.Problems = append(p.Problems, e.Error())
	}
	p.undigested(to)
	p.Interceptors, p.Slots = contributionDiff(from.Contributions, to.Contributions)
	sort.Strings(p.Problems)
	sort.Strings(p.Warnings)
	return p, nil
}

// NewRestartPlan is the plan of a restart of the named packages from the
// generation described by from, with the inputs from was built from: each
// named package is ClassReloaded (with the reasons NewPlan finds, or
// "restart requested"); every other package is ClassUnchanged, carried over
// as it is, running or not. Names that are not packages of from are
// ignored.
func NewRestartPlan(from *Snapshot, in Inputs, names ...string) (*Plan, error) {
	restart := map[string]bool{}
	for _, n := range names {
		restart[n] = true
	}
	return newPlan(from, in, func(cs []Change) {
		for i := range cs {
			c := &cs[i]
			switch {
			case !restart[c.Name]:
				c.Class, c.Reasons = ClassUnchanged, nil
			case c.Class == ClassUnchanged:
				c.Class, c.Reasons = ClassReloaded, []string{"restart requested"}
			}
		}
	})
}

// carried returns the fingerprints in from of the packages in.Kept names
// that in.Installed does not hold (a plan from a snapshot alone, without
// the previous package values): they are carried over as they run, and the
// input hash counts them as from recorded them.
func carried(from *Snapshot, in Inputs) map[string]Fingerprint {
	var out map[string]Fingerprint
	for name := range in.Kept {
		if sp := from.pkg(name); sp != nil && !slices.ContainsFunc(in.Installed.Packages, func(p *pluginpkg.Package) bool { return p.Name == name }) {
			if out == nil {
				out = map[string]Fingerprint{}
			}
			out[name] = sp.Fingerprint
		}
	}
	return out
}

// desired resolves in into a snapshot of planned packages, without
// contributions (predict fills them in); carry adds fingerprints of
// packages kept outside in.Installed to the input hash. A lazy package
// whose process runs in from (nil: none) has its files fingerprinted in
// its entry (Fingerprint.WithFiles), so that a reload restarts it if
// they changed since it started; the input hash leaves them out, as a
// lazy member's fingerprint does.
func desired(in Inputs, carry map[string]Fingerprint, from *Snapshot) (*Snapshot, *capability.Closure, error) {
	cl, err := capability.Resolve(in.Installed.CapabilityRequest(in.Host, in.Roots))
	if err != nil {
		return nil, nil, err
	}
	byName := make(map[string]*pluginpkg.Package, len(in.Installed.Packages))
	for _, p := range in.Installed.Packages {
		byName[p.Name] = p
	}
	s := &Snapshot{Format: SnapshotFormat, Packages: []SnapshotPackage{}}
	members := make([]*Member, 0, len(cl.Members))
	for _, name := range cl.Members {
		members = append(members, newMember(byName[name], &in, statusPlanned))
	}
	fps := make(map[string]Fingerprint, len(members)+len(carry))
	for i, fp := range fingerprints(members) {
		m := members[i]
		fps[m.Package.Name] = fp
		if m.lazy != "" && from.runsFiles(m.Package.Name) {
			fp = fp.WithFiles(m.Package)
		}
		s.Packages = append(s.Packages, snapshotPackage(m, fp, cl.DependsOn[m.Package.Name]))
	}
	maps.Copy(fps, carry)
	s.Hash = hashFingerprints(fps, in)
	return s, cl, nil
}

// predict fills to's contributions: unchanged plugins (and those kept
// although their manifest no longer loads, kept) keep the ones they
// declared at their handshake; added and reloaded plugins are predicted from
// their manifest claims (interceptor points at the manifest priority, slot
// claims), and Pending says so.
func (p *Plan) predict(from, to *Snapshot, manifests map[string]*pluginpkg.Manifest, kept map[string]string) {
	class := map[string]Class{}
	for _, c := range p.Packages {
		class[c.Name] = c.Class
	}
	to.Contributions = []SnapshotContribution{}
	for _, c := range from.Contributions {
		if _, isKept := kept[c.Plugin]; class[c.Plugin] == ClassUnchanged && (isKept || to.pkg(c.Plugin) != nil) {
			to.Contributions = append(to.Contributions, c) // unchanged, or kept (Inputs.Kept): carried over
		}
	}
	for _, pkg := range to.Packages {
		if class[pkg.Name] == ClassUnchanged {
			continue
		}
		if pkg.Status == StatusDeclarative {
			continue
		}
		for i, pt := range pkg.Intercepts {
			to.Contributions = append(to.Contributions, SnapshotContribution{Kind: contribution.KindInterceptor, Key: pt,
				Plugin: pkg.Name, Origin: contribution.OriginManifest, Priority: pkg.Priority, Seq: i})
		}
		for i, sl := range pkg.Replaces {
			to.Contributions = append(to.Contributions, SnapshotContribution{Kind: contribution.KindStrategy, Key: sl,
				Plugin: pkg.Name, Origin: contribution.OriginManifest, Seq: i})
		}
		if pkg.Activation == pluginpkg.ActivationLazy {
			to.Contributions = append(to.Contributions, declaredContributions(pkg.Name, manifests[pkg.Name])...)
			p.Pending = append(p.Pending, fmt.Sprintf("%q (%s, lazy): declared, not started: its contributions are "+
				"published from its manifest's declarations (or the declarations its last handshake left in the cache), "+
				"and its process starts on first use", pkg.Name, class[pkg.Name]))
			continue
		}
		p.Pending = append(p.Pending, fmt.Sprintf("%q (%s): interceptors and slot claims are predicted from its manifest; "+
			"priorities, providers and UI actions are known after its handshake", pkg.Name, class[pkg.Name]))
	}
}

// declaredContributions are the providers and actions a lazy member's
// manifest declares (runtime.contributes), as a plan predicts them.
func declaredContributions(plugin string, m *pluginpkg.Manifest) []SnapshotContribution {
	if m == nil || m.Runtime == nil {
		return nil
	}
	var out []SnapshotContribution
	for i, ref := range m.Runtime.Contributes[contribution.KindProvider] {
		out = append(out, SnapshotContribution{Kind: contribution.KindProvider, Key: contribution.ProviderID(plugin, ref),
			Plugin: plugin, Origin: contribution.OriginManifest, Seq: i})
	}
	for i, id := range m.Runtime.Contributes[contribution.KindAction] {
		out = append(out, SnapshotContribution{Kind: contribution.KindAction, Key: contribution.ActionID(plugin, id),
			Plugin: plugin, Origin: contribution.OriginManifest, Seq: i})
	}
	return out
}

// joinRules appends rule to rules, "; " between them.
func joinRules(rules, rule string) string {
	if rules == "" {
		return rule
	}
	return rules + "; " + rule
}

// leaveOut reports the plugins that would be left out of the generation
// (out: name -> the broken rule: packages withheld, Inputs.Withheld, or
// optional plugins the isolation rule leaves out, register) and, with the
// build's own cascade, the plugins that require them, and drops their
// predicted contributions. A required one, or one requiring it, is a
// problem; an optional one a warning. gone holds the failures of earlier
// rounds (name -> reason): each is reported once, and the cascade starts
// from all of them.
func (p *Plan) leaveOut(to *Snapshot, cl *capability.Closure, out, gone map[string]string) {
	if len(out) == 0 {
		return
	}
	failed := maps.Clone(gone)
	for name, rule := range out {
		failed[name] = LeftOut(rule)
	}
	cl.Cascade(failed)
	for _, name := range slices.Sorted(maps.Keys(failed)) {
		if _, earlier := gone[name]; earlier {
			continue
		}
		gone[name] = failed[name]
		switch pkg := to.pkg(name); {
		case pkg != nil && pkg.Required:
			p.Problems = append(p.Problems, fmt.Sprintf("required plugin %q cannot run: %s", name, failed[name]))
		case out[name] != "":
			p.Warnings = append(p.Warnings, fmt.Sprintf("optional plugin %q would be %s", name, failed[name]))
		default:
			p.Warnings = append(p.Warnings, fmt.Sprintf("optional plugin %q would be left out: %s", name, failed[name]))
		}
	}
	kept := to.Contributions[:0]
	for _, c := range to.Contributions {
		if _, left := gone[c.Plugin]; !left {
			kept = append(kept, c)
		}
	}
	to.Contributions = kept
}

// resolutionProblems reports what resolution already says: errors of
// required packages and unknown roots are problems; the rest are warnings.
func (p *Plan) resolutionProblems(cl *capability.Closure, to *Snapshot) {
	for _, pr := range cl.Problems {
		pkg := to.pkg(pr.Package)
		switch {
		case pr.Severity == capability.Warning:
			p.Warnings = append(p.Warnings, pr.Message)
		case pkg == nil:
			p.Problems = append(p.Problems, pr.Message)
		case pkg.Required:
			p.Problems = append(p.Problems, fmt.Sprintf("required plugin %q cannot run: %s", pr.Package, pr.Message))
		default:
			p.Warnings = append(p.Warnings, fmt.Sprintf("optional plugin %q will be left out: %s", pr.Package, pr.Message))
		}
	}
}

// undigested warns about packages whose files cannot be digested: changes to
// them go unnoticed, and a package pin on them refuses every start.
func (p *Plan) undigested(to *Snapshot) {
	for _, pkg := range to.Packages {
		if bad, ok := strings.CutPrefix(pkg.Fingerprint.Files, "unreadable: "); ok {
			p.Warnings = append(p.Warnings, fmt.Sprintf("plugin %q: files cannot be digested, so changes to them are not detected: %s", pkg.Name, bad))
		}
	}
}
