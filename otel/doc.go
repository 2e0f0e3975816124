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
// The instrumentation scope is named github.com/extkernel/extkernel/otel;
// its version is this module's version in the binary's build information
// ("(devel)" for a build from a working tree or a replace by a directory)
// and its schema URL is that of the semantic conventions 1.37.0, whose
// attribute names it uses. Durations are in seconds, in histograms with
// explicit bucket boundaries (the SDK's default boundaries, 0 to 10,000,
// are meant for milliseconds: every call would fall in one bucket):
//
//   - calls: 25, 50, 100, 250, 500 µs, 1, 2.5, 5, 10, 25, 50, 100, 250,
//     500 ms, 1, 2.5, 5, 10, 30, 60, 300 s;
//   - plugin starts: 1, 2.5, 5, 10, 25, 50, 100, 250, 500 ms, 1, 2.5, 5,
//     10, 30, 60 s.
//
// A host that wants others sets a View on its MeterProvider.
//
// The call metrics count every call the kernel sends to a plugin and every
// plugin's capability/call a host handler serves:
//
//   - extkernel.calls (counter, {call}): calls that ended, with
//     extkernel.outcome "ok" or "error";
//   - extkernel.call.duration (histogram, s);
//   - extkernel.calls.in_flight (up-down counter, {call}).
//
// They carry these attributes:
//
//   - rpc.system: "jsonrpc";
//   - rpc.service and rpc.method: for a plugin's capability/call, the
//     capability key and the method it called ("storage.kv", "get");
//     for the host's own dispatch, the plugin called and the key of the
//     contribution (a point, a slot, a provider or action ID, a custom
//     kind's key);
//   - extkernel.plugin: the plugin called, "(host)" for a host handler;
//     extkernel.kind: the contribution kind (none for a host handler);
//     extkernel.caller: the calling plugin, for a plugin's call;
//   - on a failed call (not on in_flight), error.type: the JSON-RPC
//     error code in decimal for an error answer ("-32006"), "timeout",
//     "canceled", "plugin_down", "crash", "flow_control" or "_OTHER"
//     (observe.CallOutcome.ErrorType, named by the kernel), and, for an
//     error answer, rpc.jsonrpc.error_code.
//
// The plugin metrics carry extkernel.plugin:
//
//   - extkernel.plugin.starts (counter, {start}), with extkernel.outcome
//     "ready" or "failed" and extkernel.start.cause "build" (a
//     generation's build, a supervised restart) or "activation" (a lazy
//     member's first use, also after an idle stop);
//   - extkernel.plugin.restarts (counter, {restart}): starts of a plugin
//     after its first one seen by this observer (supervised restarts and
//     reloads; a lazy member's activations are not restarts);
//   - extkernel.plugin.start.duration (histogram, s), with
//     extkernel.start.cause;
//   - extkernel.plugin.uses (counter, {use}), with extkernel.use: the
//     kernel's usage counters (observe.UsageObserver; docs/admin.md,
//     "Usage"), one per use of an optional protocol feature the host
//     served ("calls", "progress", ...) and per handshake by protocol
//     minor ("protocol/1.4"): a fixed set of values.
//
// # Traces
//
// Each host dispatch (Intercept, Strategy, CallProvider, RunAction,
// StreamProvider, Invoke, InvokeEach) is an internal span named
// "dispatch <kind>" with extkernel.kind and extkernel.key, failed with the
// dispatch's error. Each call within it has a span with the call's
// attributes above, extkernel.key and extkernel.generation:
//
//   - a call the kernel sends to a plugin, for the host's dispatch or
//     relayed from another plugin's capability/call: a client span named
//     "<kind> <plugin>";
//   - a plugin's capability/call a host handler serves: a server span
//     named "<capability>/<method>" (rpc.service/rpc.method).
//
// The parent of a host dispatch's call is the span in the call's context
// (the dispatch's), or the traceparent the host put on it
// (observe.WithTraceparent). The parent of a plugin's call, relayed or
// served by the host, is the calling plugin's span, from the traceparent
// it sent (docs/protocol.md §5.13), else the span of the host's request
// it serves. The observer puts each new span's traceparent on the call's
// context, so the called plugin receives it and its spans join the trace,
// and a host handler's spans started from its context are the call
// span's children. A failed call's span has status Error with the call's
// error, and error.type (and rpc.jsonrpc.error_code) as above.
//
// # Bounds
//
// The adapter holds no queue: it subscribes to no kernel events (a
// plugin's notifies never reach it) and records each call, dispatch and
// start synchronously, in the hook the kernel calls. What it keeps is one
// entry per plugin name it saw start (to count restarts). Its spans and
// metrics carry names, kinds, keys, capability keys and methods (only
// those a route declares: the kernel refuses any other call before the
// observer hears of it, so their number is bounded by the home's
// manifests), error types and generation numbers, and a failed call's
// error text: a plugin's, which the kernel has redacted, or a host
// handler's, as the handler returned it. Never a plugin's payloads. What waits for export is the OpenTelemetry SDK's, configured
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
