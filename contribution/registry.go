package contribution

import (
	"maps"
	"slices"
)

// Registry is an immutable snapshot of the contributions in effect, indexed
// for lookup. It is built by Builder.Build and never changes afterwards, so
// any number of goroutines may read it without locking. Lookups take no lock
// and allocate nothing.
//
// Slices returned by Interceptors, Get, OfKind and Actions are shared with the
// registry: callers MUST NOT modify their elements. Their capacity equals
// their length, so appending to one copies it and never touches the registry.
// All, Overridden, Warnings, Points and Slots return fresh copies.
//
// The zero Registry is empty: it declares no points or slots and every lookup
// finds nothing.
type Registry struct {
	all        []Contribution
	byKey      map[kindKey][]Contribution
	byKind     map[Kind][]Contribution
	overridden []Contribution
	warnings   []Problem
	points     []Point
	slots      []Slot
}

// index fills the per-kind index and the declared points and slots. r.all is
// sorted by kind first, so each kind's contributions are contiguous.
func (r *Registry) index(s *build) {
	for i := 0; i < len(r.all); {
		j := i + 1
		for j < len(r.all) && r.all[j].Kind == r.all[i].Kind {
			j++
		}
		r.byKind[r.all[i].Kind] = r.all[i:j:j]
		i = j
	}
	r.points = slices.Sorted(maps.Keys(s.points))
	r.slots = slices.Sorted(maps.Keys(s.slots))
}

// Interceptors returns the interceptors at point p in their effective order:
// priority descending (HIGHER runs FIRST), then plugin name ascending (the
// host before any plugin), then declaration order. It returns nil if there
// are none. The slice is shared: callers MUST NOT modify it.
func (r *Registry) Interceptors(p Point) []Contribution {
	return r.byKey[kindKey{KindInterceptor, string(p)}]
}

// SlotOwner returns the strategy claim that owns slot s. It returns false if
// no plugin owns the slot, in which case the host's default runs.
func (r *Registry) SlotOwner(s Slot) (Contribution, bool) {
	if cs := r.byKey[kindKey{KindStrategy, string(s)}]; len(cs) > 0 {
		return cs[0], true
	}
	return Contribution{}, false
}

// Provider returns the provider with the namespaced id, as ProviderID or
// HostProviderID build it ("plugin/<name>/<ref>", "host/<ref>").
func (r *Registry) Provider(id string) (Contribution, bool) {
	if cs := r.byKey[kindKey{KindProvider, id}]; len(cs) > 0 {
		return cs[0], true
	}
	return Contribution{}, false
}

// Actions returns every UI action, sorted by action ID. The slice is shared:
// callers MUST NOT modify it.
func (r *Registry) Actions() []Contribution { return r.byKind[KindAction] }

// Get returns the contributions of kind k in effect at key: for an Ordered
// kind, all of them in effective order; for an Exclusive kind, the owner;
// for a Unique kind, the one declaration. It returns nil if there are none.
// The slice is shared: callers MUST NOT modify it.
func (r *Registry) Get(k Kind, key string) []Contribution { return r.byKey[kindKey{k, key}] }

// OfKind returns every contribution of kind k in effect, sorted by key, then
// in effective order. The slice is shared: callers MUST NOT modify it.
func (r *Registry) OfKind(k Kind) []Contribution { return r.byKind[k] }

// All returns a copy of every contribution in effect, sorted by kind, then
// key, then effective order. Overridden claims and ignored contributions are
// not included.
func (r *Registry) All() []Contribution { return slices.Clone(r.all) }

// Len returns the number of contributions in effect, len(r.All()).
func (r *Registry) Len() int { return len(r.all) }

// Overridden returns a copy of the claims that lost to a slot owner named in
// the host config, sorted by kind, key and plugin. They still count as
// claims: each was reported as a CodeOverridden warning.
func (r *Registry) Overridden() []Contribution { return slices.Clone(r.overridden) }

// Warnings returns a copy of the warning-severity problems of the build,
// sorted by kind, key and message.
func (r *Registry) Warnings() []Problem {
	out := slices.Clone(r.warnings)
	for i := range out {
		out[i].Sources = slices.Clone(out[i].Sources)
	}
	return out
}

// Points returns a sorted copy of the valid points the host declared.
func (r *Registry) Points() []Point { return slices.Clone(r.points) }

// Slots returns a sorted copy of the valid slots the host declared.
func (r *Registry) Slots() []Slot { return slices.Clone(r.slots) }
