// Package kernel is the host-facing facade of extkernel: a host creates a
// Kernel from a Config, calls Start to build and publish the first runtime
// generation, dispatches calls to plugins through it, and calls Close when
// done.
//
// # Lifecycle
//
//  1. New validates the Config, makes its Home absolute and returns an
//     idle Kernel.
//  2. Start loads the home, builds the first generation (numbered
//     Config.FirstGeneration, default 1; package generation) and
//     publishes it. On failure nothing is published and nothing keeps
//     running.
//  3. Intercept, Strategy, CallProvider and RunAction dispatch to the
//     current generation.
//  4. Close stops everything. It is idempotent; the Kernel may not be
//     reused.
//
// # Concurrency
//
// The current generation sits behind an atomic pointer: Current and every
// dispatch read it without a lock and never see a half-built generation.
// Builds (Start, and later Reload) and Close are serialized by one mutex,
// never held on the dispatch path. A dispatch call holds a lease on the
// generation it started on; a retired generation is stopped only when its
// leases drain, or after Config.DrainTimeout. Every goroutine the kernel
// starts (retirement, event delivery from sidecars) ends before Close
// returns.
//
// # Events
//
// Subscribe delivers Events, each stamped with its Time: start progress,
// published generations and their warnings, failed builds, crashes,
// supervision states, and EventNotify, a plugin's notify notification
// (protocol.md §5.10) with the plugin, its event Name and Data as sent,
// and the generation its process serves in (zero for a process that is
// not the plugin's process in the current generation).
//
// # Errors
//
// A plugin's failure during a call is a *PluginError naming the plugin, the
// contribution and whether the plugin is required: a required plugin fails
// the call closed; an optional one is skipped and reported in the result.
// ErrNotStarted and ErrClosed say the kernel has no generation to dispatch
// to; ErrUnknownTarget that no contribution matches the ID, or, with
// Config.Strict, that the host did not declare the point or slot (without
// it, an undeclared point runs no interceptor and an undeclared slot gets
// the host default). With Config.ValidateProviderInput, input a provider's
// schema refuses is an *InputError, and the plugin is not called.
package kernel
