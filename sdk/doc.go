// Package sdk is the Go SDK for writing extkernel plugins: the plugin side
// of the protocol specified in docs/protocol.md, in the vocabulary of
// package protocol. It depends on protocol, the module's internal wire
// mechanics (internal/wire, internal/jsonscan) and the standard library
// only, never on the host packages: its logger is log/slog's, writing the
// JSON lines hclog writes (a test holds it to that).
//
// A plugin is a program that creates a Plugin, registers its declarations
// and handlers, and calls Serve:
//
//	p := sdk.New("redactor", "1.0.0")
//	p.Intercept("tool.before", func(ctx context.Context, point string, payload json.RawMessage) (protocol.InterceptResult, error) {
//		return sdk.Continue(), nil
//	})
//	p.Serve()
//
// # Lifecycle
//
//  1. New, then register: Provide, Intercept, InterceptWithPriority,
//     Strategy, Provider, StreamProvider, Action, Contribute (contributions
//     of kinds the host declares, protocol 1.1), OnInitialize. Registering
//     while the plugin serves panics.
//  2. Serve (or ServeIO) waits for the host, which speaks first. Any request
//     before initialize is answered with -32002 (not initialized).
//     initialize is answered with the plugin's name, version, the protocol
//     version the SDK implements (1.1.0) and every declaration (those of
//     Contribute only when the host speaks protocol 1.1 or later), after
//     the OnInitialize hook (if any) succeeds; a host whose protocol major
//     version differs gets -32003 (unsupported version).
//  3. Host calls are answered until a shutdown request (answered at once)
//     or the end of the input. Nothing is read after shutdown. Between the
//     two, handlers (and other goroutines) may call capabilities the
//     manifest requires with Call when the host speaks protocol 1.1 or
//     later.
//  4. In-flight handlers then get one second to finish; after that their
//     contexts are cancelled, their requests are answered with
//     CodeRequestCancelled, and they get half a second more. ServeIO then
//     returns; Serve exits the process (status 0, or 1 on a protocol
//     failure).
//
// A Plugin serves one stream at a time; after ServeIO returns it may serve
// again.
//
// # Concurrency
//
// Every intercept, strategy/invoke, provider/invoke, action/run and
// contribution/invoke request runs on the goroutine that read it (a reused
// worker goroutine), so a quick handler costs no goroutine switch. If the handler is still running
// 200 µs later, reading moves to another worker, which reads and runs the
// next requests while it finishes; after such a handler, requests move
// reading on before their handler starts, until a handler returns within
// 200 µs again. So a request, ping or $/cancel waits at most about 200 µs
// behind a running handler (plus the runtime's timer delay: about a
// millisecond, more while every CPU is busy), and each response is written
// as soon as its handler finishes: calls are multiplexed, never
// serialized, and handlers MUST be safe for concurrent use. ping,
// $/cancel, initialize and shutdown are answered by the reading goroutine
// itself, in order.
//
// A handler's context is cancelled when the host sends $/cancel for its
// request (the request is then answered with CodeRequestCancelled at once
// and the handler's eventual result dropped), when ServeIO's context is
// done, or when the drain bound runs out. Handlers MUST return once their
// context is done; ServeIO waits for them and every goroutine it started
// has ended when it returns. Notify and Logger are safe to call from any
// goroutine.
//
// Call may be used from any goroutine. A handler that calls while it runs
// on the reading goroutine keeps reading there: it reads until its answer
// comes, so a call costs no goroutine switch either, and a handler that
// calls many times keeps reading as long as each stretch of its own work
// between two calls stays within 200 µs (the time waiting for answers is
// not counted). If it reads a request for a handler first (a callee
// calling back into this plugin, A → B → A), reading moves to another
// worker with that request, and the call waits for its answer as any
// other. A Call on any other goroutine moves reading off a handler that
// holds it before it writes, so its answer is read. The plugin's requests
// have ids "c1", "c2", ..., unique within a ServeIO run; an answer to no
// request in flight (a late answer to a call given up) is dropped.
//
// # Calling capabilities
//
// Call sends capability/call (docs/protocol.md §5.11). A handler's context
// carries the id of the request it serves: a Call with that context, or
// one derived from it, names the request as the call's parent, so the
// host derives the call's deadline, cancellation, generation and depth
// from it. A Call with another context (context.Background(), in a
// goroutine of the plugin's own) is independent. When the context is done
// first, Call sends $/cancel for the call and returns its error: so
// cancelling the host's request cancels the calls its handler makes with
// its context. A call that reads its own answer returns once the host has
// answered the $/cancel, which a host does at once with -32800
// (docs/protocol.md §5.8); any other returns at once and drops the
// answer.
//
// # Streams
//
// StreamProvider registers a provider that answers with a stream of
// chunks (docs/protocol.md §5.12): its handler sends each chunk with send,
// which blocks while the host's window of chunks is unacknowledged and
// fails once the request is cancelled. The SDK reads the host's acks while
// the handler waits (it gives the read role up first, as Call does). A
// host that asks for no stream gets the chunks as one output, their JSON
// array. CallStream consumes the stream of a capability's method through
// the host, as an iter.Seq2: it acknowledges as the range consumes, so the
// provider is never more than the window ahead, and breaking out of the
// range (or ctx ending) cancels the call.
//
// Only protocol frames are written to the output; logs go to stderr as
// JSON lines in hclog's format (@timestamp, @level, @message, @module and
// the fields), written by a log/slog logger. Serve points os.Stdout at os.Stderr so that stray
// fmt.Print calls cannot corrupt the stream.
//
// # Errors
//
// A handler's error becomes the response's error: a *protocol.Error (see
// Errorf) keeps its code and message, any other error becomes
// CodePluginError with err.Error() as message. A panic in a handler becomes
// -32603 (internal error) and is logged with its stack; the plugin keeps
// running.
// A call naming a point, slot, provider or action the plugin did not
// declare gets CodeUnknownTarget, an unknown method CodeMethodNotFound,
// malformed params CodeInvalidParams. A malformed frame is answered with an
// error whose id is null and serving continues; a frame over the 4 MiB
// limit (docs/protocol.md §1) or a failed write ends ServeIO with an error.
//
// Call returns the host's error answer as a *protocol.Error, unwrapped
// (CodeNotAuthorized, CodeNotAvailable, -32007 for a call nested too deep,
// -32008 from a process of a stale generation, CodeRequestCancelled,
// CodeMethodNotFound or the callee's own code); returned by a handler, it answers the handler's
// request with the same code. Call refuses without sending anything with
// errors wrapping ErrNotServing, ErrHandshakeIncomplete or
// ErrCallsUnsupported (a host that does not serve capability/call: one
// older than protocol 1.1).
//
// # Features
//
// The plugin answers initialize with protocol 1.4.0 and announces every
// optional protocol feature the SDK implements (docs/protocol.md §4.6):
// FeatureCalls, FeatureCancel, FeatureContributions, FeatureProgress,
// FeatureStreams and FeatureTrace. It uses of each only what the host
// supports, which HostSupports reports: the features a host of 1.4 or
// later announced in initialize, or those an older host's version
// implies (none for 1.0; all but progress for 1.1 and 1.2; all six for
// 1.3). Without FeatureCalls, Call and CallStream refuse locally; without
// FeatureStreams, CallStream does; without FeatureContributions, the
// plugin declares no contributions; without FeatureProgress, Progress
// sends nothing; without FeatureCancel, a call given up is not cancelled
// (its late answer is dropped); without FeatureTrace, calls carry no
// traceparent. A plugin tests HostSupports, not the host's version.
package sdk
