// Package builder builds a runtime generation with its processes: it is
// where a generation.Inputs value meets sidecar processes. Build resolves
// the capability closure, starts the members that run with a bounded
// worker pool under one startup budget shared by all of them, applies the
// required/optional policy, cascades failures along requires edges,
// checks each manifest's methods against its handshake, turns the
// declarations into contributions (leaving out optional plugins that
// break a rule) and assembles the generation. It returns a Running set:
// the generation value and the clients of its members that run.
//
// # Ownership
//
//  1. Build owns every client it starts until it returns. On failure it
//     stops them all before it returns the *generation.BuildError; the
//     clients it adopted (Options.Adopt, from Options.Previous) are never
//     stopped by a failed Build.
//  2. A successful Build hands every client, adopted ones included, to
//     the Running set it returns; the previous set MUST then Release the
//     adopted ones (the kernel does, when it retires it).
//  3. A Running set's owner (the kernel) calls Close exactly once it no
//     longer serves the generation: Close stops the clients it still owns,
//     in parallel, and is idempotent.
//
// # Decisions
//
// The failure policy is applied here and only here: a required member's
// failure fails the build (and cancels the rest of the start, so nobody
// waits for the budget), an optional one's becomes a failed member and a
// warning. The sidecar only reports each start's outcome; package
// generation records the decisions as data. Which optional plugins a
// contribution rule leaves out is contribution.Isolate's decision, the one
// a plan applies too; the builder applies it (stops their sidecars,
// cascades, builds the registry again). Options.OnEvent reports progress
// and decides nothing.
//
// # Concurrency
//
// Build is called by one goroutine at a time per kernel (the kernel's
// build lock). Its pool's goroutines end before it returns; OnEvent calls
// are serialized. A Running set's methods are safe for concurrent use;
// its client map is immutable after Build.
package builder
