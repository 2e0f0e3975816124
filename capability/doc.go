// Package capability resolves which plugin packages must run: the capability
// closure of a requested set of packages.
//
// Packages declare what they provide (a capability Key at a semver version)
// and what they require (a Key and a semver constraint, optionally optional).
// The host itself may provide capabilities. Resolve computes the closure of
// the requested roots: every enabled package that provides a capability a
// member requires, transitively.
//
// # Choices
//
// When several providers satisfy one requirement, the choice is deterministic:
// a host-provided capability first, then the highest satisfying version, then
// the lowest package name. Every choice is recorded in Closure.Choices.
//
// A host-provided capability is preferred even when a package offers the
// same key at a higher version: the host wins whenever its version
// satisfies the constraint. A disabled package is never chosen.
//
// # Optional requirements
//
// An optional requirement that can be satisfied is resolved exactly like a
// required one: its provider is chosen, recorded in Choices and joins the
// closure, so the optional feature runs whenever it can. Only when no
// enabled provider satisfies it does it become an OptionalUnsatisfied
// warning, and the member runs without it.
//
// # Problems
//
// Resolution never stops at the first problem. Every unsatisfied requirement
// is explained in a sentence a user can act on (which providers exist, which
// versions they offer, which are disabled and how to enable them). Missing
// required capabilities are errors; unsatisfied optional requirements and
// dependency cycles are warnings: a cycle alone does not stop startup.
//
// Messages quote the constraint as semver.Constraints.String renders it,
// which reproduces the manifest's text up to spacing and commas (">= 1.2,
// <2" reads ">=1.2 <2").
//
// # Errors
//
// Resolve returns an error wrapping ErrInvalidRequest only for malformed
// input (duplicate or empty package names, nil versions or constraints,
// invalid keys). Everything else is a Problem. Closure.Err returns a
// *ResolveError listing every Error-severity problem, one per line, or nil
// when only warnings remain.
//
// # Host handlers
//
// A host that provides a capability (Request.Host) may also serve the
// calls plugins make to it: a Handler per Key, given to the kernel in its
// config (package kernel/config). The kernel routes each plugin's call to
// the handler as a *Call and sends the answer back; this package only
// declares the two types, and resolution never looks at them.
//
// # Concurrency
//
// Resolve keeps no state between calls and may run concurrently. A Closure
// is never modified after Resolve returns, so any number of goroutines may
// read it without locking.
//
// # Invariants
//
//   - Resolve is a pure function of its Request: the result does not depend on
//     the order of Request.Packages, Request.Host or Request.Roots.
//   - The closure is closed under requires: every provider chosen for a
//     member's requirement is itself a member.
//   - Resolve runs in time roughly linear in packages + requirements:
//     providers are indexed by key, never scanned per requirement.
//   - A Closure is immutable once returned.
//
// The package knows nothing about processes or manifests on disk; pluginpkg
// converts installed packages into Package values.
package capability
