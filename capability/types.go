package capability

import (
	"strconv"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/internal/ident"
	"github.com/extkernel/extkernel/internal/severity"
)

// Key names a capability, such as "storage.kv". It follows the
// dotted-identifier grammar documented in docs/manifest.md: lower-case
// segments of [a-z0-9_-] separated by dots, each starting with a letter or
// digit, at most 128 bytes.
type Key string

// Validate reports whether k follows the dotted-identifier grammar.
func (k Key) Validate() error { return ident.ValidateDotted("capability key", string(k)) }

// HostProvider is the provider name recorded in a Choice when the host itself
// provides the capability.
const HostProvider = "(host)"

// Provided is a capability offered at one version, by a package or the host.
type Provided struct {
	Key     Key
	Version *semver.Version
}

// Requirement is a capability a package needs, with the semver constraint its
// version must satisfy. An Optional requirement that cannot be satisfied is a
// warning, not an error.
type Requirement struct {
	Key        Key
	Constraint *semver.Constraints
	Optional   bool
}

// Package is one installed package as the resolver sees it. Name is unique
// within a Request. A disabled package is never chosen as a provider, but it
// is named in explanations so a user learns that enabling it would help.
type Package struct {
	Name     string
	Version  *semver.Version
	Enabled  bool
	Provides []Provided
	Requires []Requirement
}

// Request is the input to Resolve.
type Request struct {
	// Packages are all installed packages, enabled or not.
	Packages []Package
	// Host lists the capabilities the host program itself provides.
	Host []Provided
	// Roots names the packages that must run. Nil or empty means every
	// enabled package.
	Roots []string
}

// Choice records which provider satisfies one requirement of one member.
type Choice struct {
	// Package is the member whose requirement was satisfied.
	Package     string
	Requirement Requirement
	// Provider is the chosen package's name, or HostProvider.
	Provider string
	// Version is the version of the capability the provider offers.
	Version *semver.Version
	// Candidates is how many providers satisfied the requirement; more than
	// one means the deterministic choice rule decided.
	Candidates int
}

// Severity says whether a Problem stops a generation. It is the same type
// as contribution.Severity: one Severity across the module.
type Severity = severity.Severity

const (
	// Error problems make Closure.Err non-nil.
	Error = severity.Error
	// Warning problems are reported but do not stop startup.
	Warning = severity.Warning
)

// ProblemKind classifies a Problem so callers can branch on it.
type ProblemKind int

const (
	// Missing: no installed package provides the key at all.
	Missing ProblemKind = iota + 1
	// VersionMismatch: enabled providers exist, but none satisfies the
	// constraint.
	VersionMismatch
	// ProviderDisabled: only disabled packages could satisfy the requirement.
	ProviderDisabled
	// OptionalUnsatisfied: an optional requirement has no satisfying enabled
	// provider (always a Warning).
	OptionalUnsatisfied
	// Cycle: members depend on each other in a cycle (always a Warning).
	Cycle
	// UnknownRoot: a requested root is not installed.
	UnknownRoot
	// RootDisabled: a requested root is installed but disabled.
	RootDisabled
)

// String returns the kind in kebab case, such as "version-mismatch", for
// logs and machine-readable output.
func (k ProblemKind) String() string {
	switch k {
	case Missing:
		return "missing"
	case VersionMismatch:
		return "version-mismatch"
	case ProviderDisabled:
		return "provider-disabled"
	case OptionalUnsatisfied:
		return "optional-unsatisfied"
	case Cycle:
		return "cycle"
	case UnknownRoot:
		return "unknown-root"
	case RootDisabled:
		return "root-disabled"
	}
	return "ProblemKind(" + strconv.Itoa(int(k)) + ")"
}

// Problem is one resolution problem, explained in Message as a complete
// sentence a user can act on.
type Problem struct {
	Severity Severity
	Kind     ProblemKind
	// Package is the member whose requirement failed, or the root that could
	// not be found; empty for cycles.
	Package string
	// Requirement is the failed requirement; zero for root and cycle problems.
	Requirement Requirement
	// Cause is the underlying reason a requirement failed: Missing,
	// VersionMismatch or ProviderDisabled. For those three kinds it equals
	// Kind; for OptionalUnsatisfied it says which of them applies, so a
	// caller can tell "enabling a package would help" apart from "nothing
	// provides it". It is zero for Cycle, UnknownRoot and RootDisabled.
	Cause ProblemKind
	// Cycle lists the package names on a cycle, starting from the lowest
	// name, for Kind == Cycle. The closing repetition of the first name is
	// not included: the cycle a -> b -> a is []string{"a", "b"}, and a
	// package that requires a capability it provides itself is
	// []string{"a"}.
	Cycle []string
	// Message explains the problem in one or more plain sentences.
	Message string
}

// Closure is the result of Resolve. It is immutable.
type Closure struct {
	// Members are the packages that must run, sorted by name.
	Members []string
	// Choices are sorted by package name, then requirement key.
	Choices []Choice
	// DependsOn maps each member to the members it depends on (the providers
	// chosen for its requirements), each list sorted and free of duplicates.
	// Host-provided capabilities do not appear here.
	DependsOn map[string][]string
	// Problems are sorted by severity (errors first), then package, then key.
	Problems []Problem
}
