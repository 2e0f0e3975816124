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
// # Problems
//
// Resolution never stops at the first problem. Every unsatisfied requirement
// is explained in a sentence a user can act on (which providers exist, which
// versions they offer, which are disabled and how to enable them). Missing
// required capabilities are errors; unsatisfied optional requirements and
// dependency cycles are warnings: a cycle alone does not stop startup.
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
