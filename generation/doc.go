// Package generation says what a runtime generation is, as a value: the
// inputs it is built from (plain data), the resolved capability closure,
// its members and their outcomes, the contribution registry validated from
// their declarations, its warnings, a content hash of its inputs, and the
// plan or diff between two generations. It starts, owns and stops no
// process: `go list -deps` of this package names no sidecar or process
// package, and a test holds it to that.
//
// # What lives here
//
//   - Inputs: the home as loaded, the host's capabilities, points, slots,
//     kinds and strictness, each package's Launch value (policy, config,
//     environment, limits: what its fingerprint hashes), the packages the
//     host expects (Expect, checked by Inputs.Unavailable), the
//     packages withheld for permissions not accepted (Inputs.Withheld),
//     the failures carried over from the previous generation
//     (KeepFailed) and the running packages kept although their manifest
//     no longer loads (Kept).
//   - Generation: one immutable value, built by whoever runs the
//     generation (package kernel, through its builder) with Assemble from
//     the Inputs, the closure, the members (NewMember, outcomes set) and
//     the registry. Its Snapshot is its stable JSON form (docs/snapshot.md).
//   - Plan (NewPlan, NewRestartPlan) and Diff: what changes between a
//     snapshot and what the inputs now ask for, or between two snapshots,
//     package by package (unchanged, added, removed, reloaded, with the
//     reasons) and contribution by contribution, computed without
//     starting anything.
//   - Errors: BuildError (every problem of a build that failed, root causes
//     first) and UnavailableError (an expected package that cannot be
//     part of the generation, or a package withheld).
//
// # Invariants
//
//   - A Generation is immutable once Assemble returns: every method is
//     safe for concurrent use, and the slices it hands out are shared and
//     MUST NOT be modified.
//   - A Generation owns no process and has no Close: a holder of one can
//     read it, never stop what it describes. Whether a member still runs
//     is the runner's to say (the kernel reports it in kernel.Plugins and
//     a crashed member's snapshot status).
//   - A member's fingerprint hashes exactly its Launch value, so what runs
//     and what a plan compares cannot drift apart. It is computed once per
//     member (Member.Fingerprint), by its first caller: a builder takes it
//     before the member's spawn, so it describes the files the process
//     was started from. A lazy member's leaves its files and command out
//     (they are read when it starts: Fingerprint.WithFiles, taken by its
//     starter before each spawn), and so does the generation hash.
//   - Results never depend on map or goroutine order: members, warnings,
//     problems and plans are sorted.
//
// # Failure policy
//
// Three outcomes per package, never confused: skipped (disabled, or
// declarative: no process), failed optional (a warning; the generation
// runs without it), failed required (the build fails with a BuildError).
// A package whose required capability's chosen provider failed fails
// too, its reason naming the chain (capability.Closure.Cascade, the one
// implementation of the cascade, used by builds and plans alike). An
// optional plugin whose handshake declarations break a contribution rule
// is left out (LeftOut words the reason; contribution.Isolate decides
// who, for builds and plans alike), cascading like any failure;
// docs/architecture.md, "Isolation of optional plugins", states the rule.
// The build that applies the policy lives in the kernel's internal
// builder; this package records what it decided.
package generation
