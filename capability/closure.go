package capability

import (
	"cmp"
	"slices"
	"strings"
)

// closure assembles the Closure from the resolver's state: members in name
// order, deduplicated dependencies, sorted choices and every problem,
// including cycles. Members are visited in index (name) order, so only each
// member's own few choices need sorting.
func (r *resolver) closure() *Closure {
	c := &Closure{DependsOn: make(map[string][]string, len(r.queue))}
	if len(r.queue) > 0 {
		c.Members = make([]string, 0, len(r.queue))
	}
	if len(r.choices) > 0 {
		c.Choices = make([]Choice, 0, len(r.choices))
	}
	names := make([]string, len(r.deps)) // arena for DependsOn lists
	for i, p := range r.pkgs {
		if !r.member[i] {
			continue
		}
		c.Members = append(c.Members, p.Name)
		var deps []string
		deps, names = r.dependencies(i, names)
		c.DependsOn[p.Name] = deps
		c.Choices = r.appendChoices(c.Choices, i)
	}
	c.Problems = append(r.problems, r.cycles()...)
	slices.SortFunc(c.Problems, problemOrder)
	return c
}

// depsOf returns the packages member m depends on, as indexes.
func (r *resolver) depsOf(m int) []int {
	s := r.dependsOn[m]
	return r.deps[s.lo:s.hi]
}

// dependencies sorts and deduplicates member m's dependencies in place and
// returns their names, carved from arena, with the rest of the arena. It
// returns nil names for a member without dependencies.
func (r *resolver) dependencies(m int, arena []string) (names, rest []string) {
	deps := r.depsOf(m)
	slices.Sort(deps)
	deps = slices.Compact(deps)
	r.dependsOn[m].hi = r.dependsOn[m].lo + len(deps)
	if len(deps) == 0 {
		return nil, arena
	}
	names, rest = arena[:len(deps):len(deps)], arena[len(deps):]
	for j, d := range deps {
		names[j] = r.pkgs[d].Name
	}
	return names, rest
}

// appendChoices appends member m's choices to out, sorted by requirement
// key (then constraint, optional and provider, so the order is total).
func (r *resolver) appendChoices(out []Choice, m int) []Choice {
	s := r.chosen[m]
	cs := r.choices[s.lo:s.hi]
	reqs := r.pkgs[m].Requires
	if len(cs) > 1 {
		slices.SortFunc(cs, func(a, b choice) int {
			ra, rb := &reqs[a.req], &reqs[b.req]
			if c := cmp.Compare(ra.Key, rb.Key); c != 0 {
				return c
			}
			return cmp.Or(
				cmp.Compare(ra.Constraint.String(), rb.Constraint.String()),
				compareBool(ra.Optional, rb.Optional),
				cmp.Compare(a.provider, b.provider),
			)
		})
	}
	for _, ch := range cs {
		provider := HostProvider
		if ch.provider != hostIndex {
			provider = r.pkgs[ch.provider].Name
		}
		out = append(out, Choice{
			Package:     r.pkgs[m].Name,
			Requirement: reqs[ch.req],
			Provider:    provider,
			Version:     ch.version,
			Candidates:  ch.candidates,
		})
	}
	return out
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// Has reports whether the named package is a member of the closure. It does
// not allocate.
func (c *Closure) Has(name string) bool {
	_, ok := slices.BinarySearch(c.Members, name)
	return ok
}

// Errors returns the Error-severity problems, in Problems order, or nil.
func (c *Closure) Errors() []Problem { return c.filter(Error) }

// Warnings returns the Warning-severity problems, in Problems order, or nil.
func (c *Closure) Warnings() []Problem { return c.filter(Warning) }

func (c *Closure) filter(s Severity) []Problem {
	var out []Problem
	for _, p := range c.Problems {
		if p.Severity == s {
			out = append(out, p)
		}
	}
	return out
}

// Err returns nil when the closure has no Error-severity problems, and
// otherwise a *ResolveError holding every one of them. Warnings never make
// Err non-nil.
func (c *Closure) Err() error {
	errs := c.Errors()
	if len(errs) == 0 {
		return nil
	}
	return &ResolveError{Problems: errs}
}

// ResolveError is the error Closure.Err returns when resolution found
// problems that stop a generation. Retrieve it with errors.As to branch on
// each Problem's Kind.
type ResolveError struct {
	// Problems are the Error-severity problems, in Closure.Problems order.
	Problems []Problem
}

// Error returns the message of every problem, one per line.
func (e *ResolveError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Message
	}
	return strings.Join(msgs, "\n")
}
