package contribution

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/extkernel/extkernel/internal/severity"
)

// Severity says whether a Problem fails the build. It is the same type as
// capability.Severity: one Severity across the module.
type Severity = severity.Severity

// Severities. The zero Severity is Error.
const (
	// Error problems fail the build.
	Error = severity.Error
	// Warning problems are reported by Registry.Warnings; the build succeeds.
	Warning = severity.Warning
)

// Code classifies a Problem so callers can branch on it.
type Code int

// Problem codes.
const (
	// CodeInvalid: a contribution breaks a rule on its own (ID grammar,
	// priority bounds, empty plugin name, payload of the wrong type). Always
	// an Error; the contribution takes no further part in the build.
	CodeInvalid Code = iota + 1
	// CodeUnknownTarget: a contribution names a point or slot the host does
	// not declare, or slot_owners names an undeclared slot. Error in strict
	// mode, Warning otherwise; the contribution is dropped either way.
	CodeUnknownTarget
	// CodeNotAccepted: a contribution's kind is not one the host accepts.
	// Error in strict mode, Warning otherwise; the contribution is dropped.
	CodeNotAccepted
	// CodeConflict: several plugins claim one key of an Exclusive kind and
	// the host config names none of them as owner. Always an Error.
	CodeConflict
	// CodeDuplicate: a key of a Unique kind is declared more than once, or
	// one plugin declares the same key of an Ordered or Exclusive kind
	// twice. Always an Error.
	CodeDuplicate
	// CodeOverridden: a claim lost to the owner named in slot_owners. Always
	// a Warning; the claim is listed by Registry.Overridden.
	CodeOverridden
	// CodeOwnerNotClaiming: slot_owners names a plugin that does not claim
	// the slot. Error in strict mode, Warning otherwise.
	CodeOwnerNotClaiming
	// CodeHostSpec: the HostSpec itself is invalid (a bad point, slot or
	// kind declaration). Always an Error.
	CodeHostSpec
)

var codeNames = [...]string{
	CodeInvalid:          "invalid",
	CodeUnknownTarget:    "unknown-target",
	CodeNotAccepted:      "not-accepted",
	CodeConflict:         "conflict",
	CodeDuplicate:        "duplicate",
	CodeOverridden:       "overridden",
	CodeOwnerNotClaiming: "owner-not-claiming",
	CodeHostSpec:         "host-spec",
}

// String returns the code in kebab case, such as "owner-not-claiming".
func (c Code) String() string {
	if c > 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Code(" + strconv.Itoa(int(c)) + ")"
}

// Problem is one thing wrong with a build, explained in Message as a sentence
// a user can act on.
type Problem struct {
	Severity Severity
	Code     Code
	// Kind and Key say which contribution kind and key the problem concerns;
	// Key is a point, slot or unique ID. Both are empty for most CodeHostSpec
	// problems.
	Kind Kind
	Key  string
	// Sources are the contributions involved, in the order Message names
	// them; empty for host-spec problems.
	Sources []Source
	Message string
}

// String returns "error: <message>" or "warning: <message>".
func (p Problem) String() string { return p.Severity.String() + ": " + p.Message }

// RegistryError is returned by Builder.Build when at least one Error-severity
// problem was found. Use errors.As to reach it.
type RegistryError struct {
	// Problems lists every problem found, errors first, then warnings, each
	// group sorted by kind, key and message.
	Problems []Problem
}

// Error lists every problem, one per line, after a summary line.
func (e *RegistryError) Error() string {
	var errs, warns int
	for _, p := range e.Problems {
		if p.Severity == Warning {
			warns++
		} else {
			errs++
		}
	}
	var b strings.Builder
	b.WriteString("contribution registry: ")
	b.WriteString(plural(errs, "error"))
	if warns > 0 {
		b.WriteString(", " + plural(warns, "warning"))
	}
	for _, p := range e.Problems {
		b.WriteString("\n\t" + p.String())
	}
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(
			cmp.Compare(a.Severity, b.Severity),
			cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Key, b.Key),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

// subject names a key the way messages do, e.g. `slot "context.compactor"`.
func subject(spec KindSpec, key string) string {
	q := strconv.Quote(key)
	switch spec.Kind {
	case KindInterceptor:
		return "interceptor at point " + q
	case KindStrategy:
		return "slot " + q
	case KindProvider:
		return "provider " + q
	case KindAction:
		return "UI action " + q
	}
	switch spec.Target {
	case TargetPoint:
		return string(spec.Kind) + " at point " + q
	case TargetSlot:
		return string(spec.Kind) + " slot " + q
	}
	return string(spec.Kind) + " " + q
}

// listSources renders `"a" (handshake) and "b" (handshake)` or, for three or
// more, `"a" (handshake), "b" (handshake) and "c" (manifest)`.
func listSources(cs []Contribution) string {
	var b strings.Builder
	for i, c := range cs {
		switch {
		case i == 0:
		case i == len(cs)-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(c.Source.String())
	}
	return b.String()
}

func sourcesOf(cs []Contribution) []Source {
	out := make([]Source, len(cs))
	for i, c := range cs {
		out[i] = c.Source
	}
	return out
}
