// Package generation builds runtime generations: one immutable value holding
// the resolved closure, the sidecar clients it owns, the contribution
// registry built from their declarations, its warnings, and a content hash of
// its inputs.
//
// # Lifecycle
//
// Build resolves the closure, starts the members' sidecars (a bounded pool
// under one startup budget), applies the required/optional policy,
// cascades failures along requires edges, turns handshake declarations
// into contributions and validates them. Its inputs are data: each
// package's Launch value (policy, config, environment, limits) comes from
// the host, is carried by its Member and is what its fingerprint hashes;
// the ClientOptions are the same for every sidecar; an Observer only
// receives reports. A member whose manifest's kernel range rejects this
// host's protocol is refused before anything is spawned. Build returns
// either a complete Generation or a *BuildError listing every problem, in
// which case every process it started has been stopped. Sidecars named by
// Inputs.Adopt (members of Inputs.Previous) are reused, never started, and
// never stopped by a failed Build: they belong to the previous generation
// until a Build that adopted them succeeds.
//
// A Generation owns its sidecars until Close, which stops them in parallel
// (adopted ones included: ownership moved to the new generation). Close is
// idempotent. Release hands the sidecars over without stopping them, for a
// successor generation that adopted them.
//
// A Build may carry over the previous generation's outcome instead of
// starting: Inputs.Adopt reuses sidecars (an exited one stays down), and
// Inputs.KeepFailed keeps members failed with their reason. A build whose
// context is cancelled fails, whatever its optional plugins did.
//
// No exported identifier of this package reaches a sidecar: a call to a
// plugin that skipped the kernel's leases and drain rules would break
// them, so only code of this module (package kernel) reaches a member's
// sidecar; a host reads a plugin's state and PID from kernel.Plugins.
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
// This package alone applies the failure policy; the sidecars' batch start
// only reports each start's outcome. Three outcomes per package, never confused: skipped (disabled, or
// declarative: no process), failed optional (a warning; the generation runs
// without it), failed required (the build fails). A package the host
// expects (Inputs.Expect) that is not installed, did not load, or is
// disabled (unless Expected.MayDisable) is a failed required one too. A package whose required
// capability's chosen provider failed fails too, its reason naming the
// chain; a cascaded failure of a required package is a required failure.
//
// An optional plugin whose handshake declarations break a contribution rule
// (an ID outside the grammar, a conflicting claim, an unknown target in
// strict mode), or whose manifest maps a capability's method
// (provides[].methods) to a provider its handshake does not declare, is
// left out: a failed optional member whose reason names the
// rule and the other party, cascading like any failure, its sidecar
// stopped; the registry is built from the rest. In a conflict between a
// required and an optional plugin the optional one is left out; a required
// plugin's own violation, or a conflict between required plugins, fails the
// build. docs/architecture.md, "Isolation of optional plugins", states the
// rule.
//
// A BuildError lists root causes first, then their consequences (required
// plugins aborted with their batch, or failed along requires edges).
package generation
