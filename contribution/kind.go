package contribution

import "strconv"

// Kind names a kind of contribution. Its grammar is the dotted-identifier
// grammar shared with Point and Slot. The four built-in kinds are
// KindInterceptor, KindStrategy, KindProvider and KindAction; a host
// registers further kinds through HostSpec.Kinds.
type Kind string

// Built-in kinds.
const (
	// KindInterceptor is an interceptor at a host-declared Point; payload
	// Interceptor; policy Ordered.
	KindInterceptor Kind = "interceptor"
	// KindStrategy is a claim on a host-declared strategy Slot; payload
	// Strategy; policy Exclusive.
	KindStrategy Kind = "strategy"
	// KindProvider is a provider, keyed by its namespaced ID (see
	// ProviderID); payload Provider; policy Unique.
	KindProvider Kind = "provider"
	// KindAction is a UI action, keyed by its namespaced ID (see
	// ActionID); payload Action; policy Unique.
	KindAction Kind = "action"
)

// KindPolicy is how a kind resolves several contributions with the same key.
// It is declared once per kind, in its KindSpec.
type KindPolicy int

// Kind policies. The zero KindPolicy is invalid.
const (
	// Ordered allows any number of contributions per key, from different
	// plugins, and runs them in the effective order: priority descending
	// (HIGHER runs FIRST), then plugin name ascending, then declaration
	// order (Seq) ascending.
	Ordered KindPolicy = iota + 1
	// Exclusive allows one owner per key. Two plugins claiming one key fail
	// the build, unless the host names the owner in HostSpec.SlotOwners.
	Exclusive
	// Unique requires every key to be declared once; a duplicate fails the
	// build.
	Unique
)

// String returns "ordered", "exclusive" or "unique".
func (p KindPolicy) String() string {
	switch p {
	case Ordered:
		return "ordered"
	case Exclusive:
		return "exclusive"
	case Unique:
		return "unique"
	}
	return "Policy(" + strconv.Itoa(int(p)) + ")"
}

// Target says what a kind's keys refer to.
type Target int

// Targets. The zero Target is TargetNone.
const (
	// TargetNone: a key is a free identifier following the dotted grammar
	// (or, for KindProvider, a namespaced provider ID).
	TargetNone Target = iota
	// TargetPoint: a key is a Point the host must declare in HostSpec.Points.
	TargetPoint
	// TargetSlot: a key is a Slot the host must declare in HostSpec.Slots.
	// Exclusive kinds targeting slots honour HostSpec.SlotOwners.
	TargetSlot
)

// String returns "none", "point" or "slot".
func (t Target) String() string {
	switch t {
	case TargetNone:
		return "none"
	case TargetPoint:
		return "point"
	case TargetSlot:
		return "slot"
	}
	return "Target(" + strconv.Itoa(int(t)) + ")"
}

// KindSpec declares a kind: its conflict policy and what its keys refer to.
// A kind is declared once; the built-in kinds' specs are fixed.
type KindSpec struct {
	Kind   Kind
	Policy KindPolicy
	Target Target
}

// builtinKinds are the specs of the built-in kinds, in a fixed order.
var builtinKinds = [...]KindSpec{
	{Kind: KindInterceptor, Policy: Ordered, Target: TargetPoint},
	{Kind: KindStrategy, Policy: Exclusive, Target: TargetSlot},
	{Kind: KindProvider, Policy: Unique, Target: TargetNone},
	{Kind: KindAction, Policy: Unique, Target: TargetNone},
}

// DefaultKinds returns a new slice holding the specs of the four built-in
// kinds. A host that accepts further kinds appends to it:
//
//	spec.Kinds = append(contribution.DefaultKinds(), contribution.KindSpec{...})
func DefaultKinds() []KindSpec {
	out := make([]KindSpec, len(builtinKinds))
	copy(out, builtinKinds[:])
	return out
}

// Builtin reports whether k is one of the four built-in kinds
// (interceptor, strategy, provider, action), which every kernel accepts
// and a host cannot declare again.
func (k Kind) Builtin() bool {
	_, ok := builtinSpec(k)
	return ok
}

// builtinSpec returns the spec of a built-in kind.
func builtinSpec(k Kind) (KindSpec, bool) {
	for _, s := range builtinKinds {
		if s.Kind == k {
			return s, true
		}
	}
	return KindSpec{}, false
}
