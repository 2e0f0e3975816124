package capability

import (
	"cmp"
	"slices"
	"strings"

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
// ErrInvalidRequest, lists every defect, and the Closure is nil. Resolution
// problems, such as a missing capability, an unknown root or a cycle, are
// never returned as an error: they are recorded in Closure.Problems and
// Closure.Err reports the fatal ones.
//
// The returned Closure shares the *semver.Version and *semver.Constraints
// values of req; neither Resolve nor the Closure modifies them. Resolve is
// safe for concurrent use and runs in time roughly linear in the number of
// packages plus requirements.
func Resolve(req Request) (*Closure, error) {
	r := newResolver(req)
	if err := r.validate(req.Host); err != nil {
		return nil, err
	}
	r.index(req.Host)
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
	// last is the provider of the most recently counted offer.
	last int
}

// choice is a Choice in index form: the requirement is
// pkgs[member].Requires[req].
type choice struct {
	member, req, provider int
	version               *semver.Version
	candidates            int
}

// span is a half-open range of resolver.choices or of the deps arena.
type span struct{ lo, hi int }

// resolver holds the state of one Resolve call. Its slices are sized from
// the request up front, so a call allocates a fixed, small number of times
// beyond the Closure it returns.
type resolver struct {
	// pkgs is req.Packages sorted by name, so comparing indexes compares
	// names.
	pkgs    []*Package
	offerAt map[Key]int
	offers  []offers
	// nProvided and nRequired count the offers and requirements of all
	// packages, to size the index and the per-member arenas.
	nProvided, nRequired int

	member []bool
	queue  []int
	// choices and deps are arenas: member m's choices are
	// choices[chosen[m].lo:chosen[m].hi] and the packages it depends on are
	// deps[chosen[m].lo:chosen[m].hi] minus host choices (dependsOn[m]).
	choices   []choice
	chosen    []span
	deps      []int
	dependsOn []span
	problems  []Problem
}

func newResolver(req Request) *resolver {
	n := len(req.Packages)
	r := &resolver{pkgs: make([]*Package, n)}
	for i := range req.Packages {
		p := &req.Packages[i]
		r.pkgs[i] = p
		r.nProvided += len(p.Provides)
		r.nRequired += len(p.Requires)
	}
	slices.SortFunc(r.pkgs, func(a, b *Package) int { return strings.Compare(a.Name, b.Name) })
	return r
}

// index builds the providers-by-key index once, so every later lookup is
// one map access, never a scan of the packages. A first pass counts the
// offers of each key; a second fills lists carved from one arena.
func (r *resolver) index(host []Provided) {
	total := len(host) + r.nProvided
	r.offerAt = make(map[Key]int, total)
	r.offers = make([]offers, 0, total)
	at := make([]int, 0, total) // offer list of each provided, in visiting order
	counts := make([]int, 0, total)
	r.eachOffer(host, func(pkg int, enabled bool, p Provided) {
		i, ok := r.offerAt[p.Key]
		if !ok {
			i = len(r.offers)
			r.offerAt[p.Key] = i
			r.offers = append(r.offers, offers{last: pkg})
			counts = append(counts, 0, 0)
		}
		o := &r.offers[i]
		// Offers are visited provider by provider, so a repeat is always
		// adjacent to the provider's previous offer.
		o.repeats = o.repeats || (ok && o.last == pkg)
		o.last = pkg
		counts[2*i+disabledSlot(enabled)]++
		at = append(at, i)
	})
	arena := make([]candidate, total)
	for i := range r.offers {
		ne, nd := counts[2*i], counts[2*i+1]
		r.offers[i].enabled, arena = arena[:0:ne], arena[ne:]
		r.offers[i].disabled, arena = arena[:0:nd], arena[nd:]
	}
	k := 0
	r.eachOffer(host, func(pkg int, enabled bool, p Provided) {
		o := &r.offers[at[k]]
		k++
		c := candidate{pkg: pkg, version: p.Version}
		if enabled {
			o.enabled = append(o.enabled, c)
		} else {
			o.disabled = append(o.disabled, c)
		}
	})
	for i := range r.offers {
		if o := &r.offers[i]; len(o.enabled) > 1 || len(o.disabled) > 1 {
			slices.SortFunc(o.enabled, choiceOrder)
			slices.SortFunc(o.disabled, choiceOrder)
		}
	}
}

func disabledSlot(enabled bool) int {
	if enabled {
		return 0
	}
	return 1
}

// eachOffer calls fn for every host offer, then for every package's offers
// in name order.
func (r *resolver) eachOffer(host []Provided, fn func(pkg int, enabled bool, p Provided)) {
	for _, p := range host {
		fn(hostIndex, true, p)
	}
	for i, pkg := range r.pkgs {
		for _, p := range pkg.Provides {
			fn(i, pkg.Enabled, p)
		}
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
	n := len(r.pkgs)
	r.member = make([]bool, n)
	r.queue = make([]int, 0, n)
	r.chosen = make([]span, n)
	r.dependsOn = make([]span, n)
	r.choices = make([]choice, 0, r.nRequired)
	r.deps = make([]int, 0, r.nRequired)
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
		i, ok := slices.BinarySearchFunc(r.pkgs, name, func(p *Package, name string) int {
			return strings.Compare(p.Name, name)
		})
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
// queueing the providers it chooses. A member's choices and dependencies
// are appended contiguously, and recorded as spans of the arenas.
func (r *resolver) walk() {
	for head := 0; head < len(r.queue); head++ {
		m := r.queue[head]
		c0, d0 := len(r.choices), len(r.deps)
		for j := range r.pkgs[m].Requires {
			r.require(m, j)
		}
		r.chosen[m] = span{c0, len(r.choices)}
		r.dependsOn[m] = span{d0, len(r.deps)}
	}
}

// require chooses a provider for requirement j of member m, or records the
// problem explaining why there is none.
func (r *resolver) require(m, j int) {
	req := &r.pkgs[m].Requires[j]
	var o *offers
	if i, ok := r.offerAt[req.Key]; ok {
		o = &r.offers[i]
	}
	best, n := o.choose(req.Constraint)
	if n == 0 {
		r.problems = append(r.problems, r.explain(m, *req, o))
		return
	}
	r.choices = append(r.choices, choice{
		member: m, req: j, provider: best.pkg, version: best.version, candidates: n,
	})
	if best.pkg != hostIndex {
		r.deps = append(r.deps, best.pkg)
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
