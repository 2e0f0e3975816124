package capability

import (
	"cmp"
	"slices"
	"strings"
)

// closure assembles the Closure from the resolver's state: members in name
// order, deduplicated dependencies, sorted choices and every problem,
// including cycles.
func (r *resolver) closure() *Closure {
	c := &Closure{DependsOn: make(map[string][]string, len(r.queue))}
	if len(r.queue) > 0 {
		c.Members = make([]string, 0, len(r.queue))
	}
	for i, p := range r.pkgs {
		if !r.member[i] {
			continue
		}
		c.Members = append(c.Members, p.Name)
		deps := r.deps[i]
		slices.Sort(deps)
		deps = slices.Compact(deps)
		r.deps[i] = deps
		var names []string
		if len(deps) > 0 {
			names = make([]string, len(deps))
			for j, d := range deps {
				names[j] = r.pkgs[d].Name
			}
		}
		c.DependsOn[p.Name] = names
	}
	c.Choices = r.sortedChoices()
	c.Problems = append(r.problems, r.cycles()...)
	slices.SortFunc(c.Problems, problemOrder)
	return c
}

// sortedChoices converts the recorded choices to Choice values sorted by
// package, then requirement key (then constraint, optional and provider,
// so the order is total).
func (r *resolver) sortedChoices() []Choice {
	if len(r.choices) == 0 {
		return nil
	}
	slices.SortFunc(r.choices, func(a, b choice) int {
		if c := cmp.Compare(a.member, b.member); c != 0 {
			return c // indexes are in name order
		}
		if c := cmp.Compare(a.req.Key, b.req.Key); c != 0 {
			return c
		}
		return cmp.Or(
			cmp.Compare(a.req.Constraint.String(), b.req.Constraint.String()),
			compareBool(a.req.Optional, b.req.Optional),
			cmp.Compare(a.provider, b.provider),
		)
	})
	out := make([]Choice, len(r.choices))
	for i, ch := range r.choices {
		provider := HostProvider
		if ch.provider != hostIndex {
			provider = r.pkgs[ch.provider].Name
		}
		out[i] = Choice{
			Package:     r.pkgs[ch.member].Name,
			Requirement: ch.req,
			Provider:    provider,
			Version:     ch.version,
			Candidates:  ch.candidates,
		}
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
