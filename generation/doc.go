// Package generation builds runtime generations: one immutable value holding
// the resolved closure, the sidecar clients it owns, the contribution
// registry built from their declarations, its warnings, and a content hash of
// its inputs.
//
// # Lifecycle
//
// Build resolves the closure, starts the members' sidecars (a bounded pool
// under one startup budget, sidecar.StartBatch), applies the
// required/optional policy, cascades failures along requires edges, turns
// handshake declarations into contributions and validates them. Its inputs
// are data: each package's Launch value (policy, config, environment,
// limits) comes from the host, is carried by its Member and is what its
// fingerprint hashes; an Observer only receives reports. It returns either a
// complete Generation or a *BuildError listing every problem, in which case
// every process it started has been stopped. Clients passed in
// Inputs.Adopt are reused, never started, and never stopped by a failed
// Build: they belong to the caller until a Build that adopted them
// succeeds.
//
// A Generation owns its clients until Close, which stops them in parallel
// (adopted clients included: ownership moved to the new generation). Close
// is idempotent. Release hands the clients over without stopping them, for
// a successor generation that adopted them.
//
// A Build may carry over the previous generation's outcome instead of
// starting: Inputs.Adopt reuses clients (an exited one stays down), and
// Inputs.KeepFailed keeps members failed with their reason. A build whose
// context is cancelled fails, whatever its optional plugins did.
//
// # Concurrency
//
// A Generation is immutable after Build returns, except for its clients'
// own state (a client may crash); every method is safe for concurrent use.
// The package never owns the "current generation" pointer: package kernel
// does.
//
// # Failure policy
//
// This package alone applies the failure policy; package sidecar only
// reports each start's outcome. Three outcomes per package, never confused: skipped (disabled, or
// declarative: no process), failed optional (a warning; the generation runs
// without it), failed required (the build fails). A package the host
// expects (Inputs.Expect) that is not installed, did not load, or is
// disabled (unless Expected.MayDisable) is a failed required one too. A package whose required
// capability's chosen provider failed fails too, its reason naming the
// chain; a cascaded failure of a required package is a required failure.
//
// An optional plugin whose handshake declarations break a contribution rule
// (an ID outside the grammar, a conflicting claim, an unknown target in
// strict mode) is left out: a failed optional member whose reason names the
// rule and the other party, cascading like any failure, its sidecar
// stopped; the registry is built from the rest. In a conflict between a
// required and an optional plugin the optional one is left out; a required
// plugin's own violation, or a conflict between required plugins, fails the
// build. docs/architecture.md, "Isolation of optional plugins", states the
// rule.
//
// A BuildError lists root causes first, then their consequences (required
// plugins aborted with their batch, wrapping a *sidecar.AbortedError, or
// failed along requires edges).
package generation
