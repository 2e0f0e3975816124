// Package kernelotel is an OpenTelemetry adapter for extkernel: a
// observe.Observer that records metrics and traces for every call the
// kernel sends to a plugin and every plugin start. It lives in a module of
// its own (github.com/extkernel/extkernel/otel), so that the core module
// does not depend on OpenTelemetry.
//
// # Use
//
//	obs, err := kernelotel.NewObserver(kernelotel.Options{}) // the global providers
//	cfg.Observer = obs
//	k, err := kernel.New(cfg)
//
// # Metrics
//
// All carry the attribute extkernel.plugin; call metrics also
// extkernel.kind (interceptor, strategy, provider, action):
//
//   - extkernel.calls (counter): calls that ended, with extkernel.outcome
//     "ok" or "error";
//   - extkernel.call.duration (histogram, seconds);
//   - extkernel.calls.in_flight (up-down counter);
//   - extkernel.plugin.starts (counter), with extkernel.outcome "ready" or
//     "failed";
//   - extkernel.plugin.restarts (counter): starts of a plugin after its
//     first one seen by this observer (supervised restarts and reloads);
//   - extkernel.plugin.start.duration (histogram, seconds).
//
// # Traces
//
// Each host dispatch (Intercept, Strategy, CallProvider, RunAction,
// StreamProvider, Invoke, InvokeEach) is an internal span named
// "dispatch <kind>" with extkernel.kind and extkernel.key, failed with the
// dispatch's error. Each call the kernel sends to a plugin within it is a
// client span named "<kind> <plugin>" with the attributes
// extkernel.plugin, extkernel.kind, extkernel.key, extkernel.generation
// and, for a call the kernel relays from another plugin, extkernel.caller.
// Its parent is the span in the call's context: the dispatch's span, or,
// for a relayed call, the calling plugin's span, from
// the traceparent it sent (docs/protocol.md §5.13). The observer puts the
// new span's traceparent on the call's context (observe.WithTraceparent),
// so the plugin receives it and its spans join the trace. A failed call's
// span has status Error with the call's error.
//
// # Bounds
//
// The adapter holds no queue: it subscribes to no kernel events (a
// plugin's notifies never reach it) and records each call, dispatch and
// start synchronously, in the hook the kernel calls. What it keeps is one
// entry per plugin name it saw start (to count restarts). Its spans and
// metrics carry names, kinds, keys and generation numbers, and a failed
// call's error text, which the kernel has redacted; never a plugin's
// payloads. What waits for export is the OpenTelemetry SDK's, configured
// by the host: sdktrace.NewBatchSpanProcessor holds at most
// sdktrace.WithMaxQueueSize spans (2048 by default) and drops the newest
// beyond them. A host MUST NOT configure it with sdktrace.WithBlocking:
// a span ends on the goroutine of the kernel's call, which would then
// wait for the exporter.
//
// # Concurrency
//
// An Observer is safe for concurrent use; Call and Start never block.
package kernelotel
