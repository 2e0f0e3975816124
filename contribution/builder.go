package contribution

import (
	"cmp"
	"maps"
	"slices"
)

// HostSpec is what the host defines: its points and slots, the kinds it
// accepts, how strict it is and which plugin owns a contested slot. It
// mirrors the host config's points, slots, strict and slot_owners keys.
type HostSpec struct {
	// Points are the interception points the host defines. Duplicates are
	// harmless.
	Points []Point
	// Slots are the strategy slots the host defines. Duplicates are
	// harmless.
	Slots []Slot
	// Strict makes a contribution to an unknown point or slot, a kind the
	// host does not accept, and a slot owner that does not claim its slot
	// errors instead of warnings.
	Strict bool
	// SlotOwners names, per slot, the plugin that owns it when several
	// plugins claim it (config key slot_owners). It applies to every
	// Exclusive kind whose Target is TargetSlot.
	SlotOwners map[Slot]string
	// Kinds are the kinds the host accepts. Nil means DefaultKinds(); a
	// non-nil slice is the complete list, so a host adding a kind appends to
	// DefaultKinds(), and a host leaving a built-in kind out refuses it.
	Kinds []KindSpec
}

// Builder collects contributions and builds Registry snapshots from them.
// The zero Builder is not usable; call NewBuilder. A Builder is not safe for
// concurrent use; the registries it builds are.
type Builder struct {
	spec HostSpec
	cs   []Contribution
}

// NewBuilder returns a Builder for the host described by spec. spec is copied:
// changing it afterwards does not affect the Builder.
func NewBuilder(spec HostSpec) *Builder {
	spec.Points = slices.Clone(spec.Points)
	spec.Slots = slices.Clone(spec.Slots)
	spec.SlotOwners = maps.Clone(spec.SlotOwners)
	spec.Kinds = slices.Clone(spec.Kinds)
	return &Builder{spec: spec}
}

// Add appends contributions, in declaration order. They are copied;
// validation happens in Build.
func (b *Builder) Add(cs ...Contribution) {
	b.cs = append(b.cs, cs...)
}

// Grow makes room for n more contributions, so that Adds of that many
// do not grow the Builder again: a host that knows how many it will add
// (a generation of many plugins) saves the copies of a growing slice.
// A negative n is ignored.
func (b *Builder) Grow(n int) {
	if n > 0 {
		b.cs = slices.Grow(b.cs, n)
	}
}

// Build validates every contribution added so far, applies each kind's
// conflict policy and returns an immutable Registry. It never stops at the
// first problem: on failure it returns a nil Registry and a *RegistryError
// listing every problem, errors and warnings. On success, warnings are
// available from Registry.Warnings. Build may be called again after further
// Adds; each call returns a new, independent snapshot.
func (b *Builder) Build() (*Registry, error) {
	s := newBuild(b.spec)
	s.accepted = make([]entry, 0, len(b.cs))
	for i := range b.cs {
		s.add(i, &b.cs[i])
	}
	reg := s.resolve()
	sortProblems(s.problems)
	for _, p := range s.problems {
		if p.Severity == Error {
			return nil, &RegistryError{Problems: s.problems}
		}
	}
	reg.warnings = s.problems
	return reg, nil
}

// kindKey indexes contributions by kind and key.
type kindKey struct {
	kind Kind
	key  string
}

// entry is a contribution accepted for resolution, with its Add index.
// c points into Builder.cs, which no Add changes during a Build: an entry
// is sorted and grouped by the dozen, and a Contribution is ~120 bytes.
type entry struct {
	c    *Contribution
	spec KindSpec
	idx  int
}

// build is the state of one Build call.
type build struct {
	host     HostSpec
	kinds    map[Kind]KindSpec
	points   map[Point]bool
	slots    map[Slot]bool
	accepted []entry // in Add order; resolve groups them by kind and key
	problems []Problem
}

func newBuild(host HostSpec) *build {
	s := &build{host: host}
	s.checkHost()
	return s
}

// lenient is the severity of problems that strict mode turns into errors.
func (s *build) lenient() Severity {
	if s.host.Strict {
		return Error
	}
	return Warning
}

func (s *build) report(p Problem) { s.problems = append(s.problems, p) }

// add validates one contribution and, if it is valid and accepted, files it
// under its kind and key.
func (s *build) add(idx int, c *Contribution) {
	spec, ok := s.check(*c)
	if !ok {
		return
	}
	s.accepted = append(s.accepted, entry{c: c, spec: spec, idx: idx})
}

// byOwner orders entries by source: plugin name (the host's empty name
// first), then declaration order, then origin, then Add order.
func byOwner(a, b entry) int {
	return cmp.Or(
		cmp.Compare(a.c.Source.Plugin, b.c.Source.Plugin),
		cmp.Compare(a.c.Seq, b.c.Seq),
		cmp.Compare(a.c.Source.Origin, b.c.Source.Origin),
		cmp.Compare(a.idx, b.idx),
	)
}

// effective is the order of an Ordered kind: priority descending (higher runs
// first), then byOwner.
func effective(a, b entry) int {
	return cmp.Or(cmp.Compare(b.c.Priority, a.c.Priority), byOwner(a, b))
}
