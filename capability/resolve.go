package capability

import (
	"cmp"
	"slices"

	"github.com/Masterminds/semver/v3"
)

// Resolve computes the capability closure of req.
//
// The closure starts from the roots (every enabled package when req.Roots is
// empty) and adds, transitively, the provider chosen for every requirement
// of every member. A satisfiable optional requirement is treated like a
// required one: its provider is chosen and joins the closure, so an optional
// feature that can run does run. An unsatisfiable optional requirement is a
// Warning and the member runs without it.
//
// Resolve returns an error only when req is malformed: the error wraps
// ErrInvalidRequest, lists every defect, and the Closure is nil. Resolution problems, such as a
// missing capability, an unknown root or a cycle, are never returned as an
// error: they are recorded in Closure.Problems and Closure.Err reports the
// fatal ones.
//
// The returned Closure shares the *semver.Version and *semver.Constraints
// values of req; neither Resolve nor the Closure modifies them. Resolve is
// safe for concurrent use and runs in time roughly linear in the number of
// packages plus requirements.
func Resolve(req Request) (*Closure, error) {
	if err := validate(req); err != nil {
		return nil, err
	}
	r := newResolver(req)
	r.seedRoots(req.Roots)
	r.walk()
	return r.closure(), nil
}

// hostIndex is the package index of a host-provided candidate.
const hostIndex = -1

// candidate is one (provider, version) offer of a key. pkg indexes
// resolver.pkgs, or is hostIndex.
type candidate struct {
	pkg     int
	version *semver.Version
}

// offers holds every offer of one key.
type offers struct {
	// enabled lists the host and enabled packages in choice order: host
	// first, then highest version, then lowest package name.
	enabled []candidate
	// disabled lists disabled packages in the same order.
	disabled []candidate
	// repeats is set when one provider offers the key more than once, so
	// counting candidates must count distinct providers.
	repeats bool
	// last is the provider of the most recently added offer.
	last int
}

// choice is a Choice before names are filled in.
type choice struct {
	member, provider int
	req              Requirement
	version          *semver.Version
	candidates       int
}

// resolver holds the state of one Resolve call.
type resolver struct {
	// pkgs is req.Packages sorted by name, so comparing indexes compares
	// names.
	pkgs    []*Package
	byName  map[string]int
	offerAt map[Key]int
	offers  []offers

	member   []bool
	queue    []int
	deps     [][]int
	choices  []choice
	problems []Problem
}

func newResolver(req Request) *resolver {
	n := len(req.Packages)
	r := &resolver{
		pkgs:   make([]*Package, n),
		byName: make(map[string]int, n),
		member: make([]bool, n),
		deps:   make([][]int, n),
	}
	for i := range req.Packages {
		r.pkgs[i] = &req.Packages[i]
	}
	slices.SortFunc(r.pkgs, func(a, b *Package) int { return cmp.Compare(a.Name, b.Name) })
	for i, p := range r.pkgs {
		r.byName[p.Name] = i
	}
	r.index(req.Host)
	return r
}

// index builds the providers-by-key index once: every later lookup is one
// map access, never a scan of the packages.
func (r *resolver) index(host []Provided) {
	r.offerAt = make(map[Key]int)
	add := func(pkg int, enabled bool, p Provided) {
		at, ok := r.offerAt[p.Key]
		if !ok {
			at = len(r.offers)
			r.offerAt[p.Key] = at
			r.offers = append(r.offers, offers{last: pkg})
		}
		o := &r.offers[at]
		// Offers are added provider by provider, so a repeat is always
		// adjacent to the provider's previous offer.
		if ok && o.last == pkg {
			o.repeats = true
		}
		o.last = pkg
		c := candidate{pkg: pkg, version: p.Version}
		if enabled {
			o.enabled = append(o.enabled, c)
		} else {
			o.disabled = append(o.disabled, c)
		}
	}
	for _, p := range host {
		add(hostIndex, true, p)
	}
	for i, pkg := range r.pkgs {
		for _, p := range pkg.Provides {
			add(i, pkg.Enabled, p)
		}
	}
	for i := range r.offers {
		slices.SortFunc(r.offers[i].enabled, choiceOrder)
		slices.SortFunc(r.offers[i].disabled, choiceOrder)
	}
}

// choiceOrder orders candidates by the choice rule: the host first, then
// the highest version, then the lowest package name (index).
func choiceOrder(a, b candidate) int {
	if (a.pkg == hostIndex) != (b.pkg == hostIndex) {
		if a.pkg == hostIndex {
			return -1
		}
		return 1
	}
	if c := b.version.Compare(a.version); c != 0 {
		return c
	}
	return cmp.Compare(a.pkg, b.pkg)
}

// seedRoots adds the requested roots to the closure, or every enabled
// package when roots is empty.
func (r *resolver) seedRoots(roots []string) {
	if len(roots) == 0 {
		for i, p := range r.pkgs {
			if p.Enabled {
				r.add(i)
			}
		}
		return
	}
	roots = slices.Clone(roots)
	slices.Sort(roots)
	for _, name := range slices.Compact(roots) {
		i, ok := r.byName[name]
		switch {
		case !ok:
			r.problems = append(r.problems, unknownRoot(name))
		case !r.pkgs[i].Enabled:
			r.problems = append(r.problems, disabledRoot(name))
		default:
			r.add(i)
		}
	}
}

// add makes package i a member and queues it, once.
func (r *resolver) add(i int) {
	if !r.member[i] {
		r.member[i] = true
		r.queue = append(r.queue, i)
	}
}

// walk resolves the requirements of every queued member, breadth first,
// queueing the providers it chooses.
func (r *resolver) walk() {
	for head := 0; head < len(r.queue); head++ {
		m := r.queue[head]
		for _, req := range r.pkgs[m].Requires {
			r.require(m, req)
		}
	}
}

// require chooses a provider for one requirement of member m, or records
// the problem explaining why there is none.
func (r *resolver) require(m int, req Requirement) {
	var o *offers
	if at, ok := r.offerAt[req.Key]; ok {
		o = &r.offers[at]
	}
	best, n := o.choose(req.Constraint)
	if n == 0 {
		r.problems = append(r.problems, r.explain(m, req, o))
		return
	}
	r.choices = append(r.choices, choice{
		member: m, provider: best.pkg, req: req, version: best.version, candidates: n,
	})
	if best.pkg != hostIndex {
		r.deps[m] = append(r.deps[m], best.pkg)
		r.add(best.pkg)
	}
}

// choose returns the first enabled candidate satisfying c in choice order,
// and how many distinct providers satisfy c. o may be nil.
func (o *offers) choose(c *semver.Constraints) (best candidate, n int) {
	if o == nil {
		return candidate{}, 0
	}
	var counted map[int]bool
	if o.repeats {
		counted = make(map[int]bool)
	}
	for _, cand := range o.enabled {
		if !c.Check(cand.version) {
			continue
		}
		if n == 0 {
			best = cand
		}
		if counted != nil {
			if counted[cand.pkg] {
				continue
			}
			counted[cand.pkg] = true
		}
		n++
	}
	return best, n
}
