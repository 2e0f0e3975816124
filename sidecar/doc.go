// Package sidecar starts and talks to plugin processes: spawn, stdio
// framing, JSON-RPC, the handshake, calls with deadlines and cancellation,
// logs, stop budgets, crash detection, and the bounded pool start of a batch
// under one budget. It knows plugins and processes, never manifests or
// generations: what to start, and what its manifest authorizes, comes in as
// a Plugin value.
//
// # Lifecycle
//
// Start spawns a plugin's runtime without a shell, in the package
// directory, in its own process group, with an environment built from
// AllowedHostEnv(), the manifest's env and the EXTKERNEL_* variables (never
// the host's whole environment). A pinned plugin (Plugin.Pin) is checked
// right before exec: its executable's sha256 (hashed through the descriptor
// that is then exec'd, see below) or, for a package pin, its files and
// resolved command; it is refused if it differs. Start then sends initialize, bounded by the per-plugin
// handshake timeout and by the caller's context, checks the protocol
// version and checks every declaration against what the manifest
// authorizes (the Plugin's Provides, Intercepts, Replaces, Contributes and
// priority bounds, and for contributions the host's Kinds). A Plugin MUST come from a validated manifest whose kernel range
// admits this host's protocol: the caller checks the manifest alone before
// it calls Start. On success the caller owns a *Client and:
//
//  1. MUST call Close exactly when it no longer needs the plugin, even after
//     a crash (Close is idempotent and releases the resources);
//  2. may call Call, Intercept, Invoke and Ping concurrently; each takes a
//     context whose end sends $/cancel and returns at once;
//  3. learns of a crash through Done, Err, the *CrashError returned by
//     calls, and Options.OnCrash (called once), and of the plugin's health
//     through Options.OnHealth.
//
// The plugin's capability/call requests (protocol 1.1) go to
// Options.OnCall, each on a goroutine of its own (see Concurrency); every
// other plugin request is answered -32601, and so is capability/call when
// OnCall is nil. A call may name a host request in flight to the same
// plugin as its parent: its context then derives from that request's
// context, with at most its remaining time, and is cancelled when that
// request ends (answered, timed out, withdrawn). WithCallTimeoutValue lets
// the caller of Call tag a request so that OnCall finds the tag in a child
// call's context. Each pending request keeps its context and the end of
// its own timeout for this; nothing more is allocated per call.
//
// OpenStream asks a provider for its answer as a stream (protocol 1.1,
// docs/protocol.md §5.12) and returns the host's end of it, a *Stream:
// Next takes the chunks, acknowledging them as it takes them (or, with
// StreamOptions.ManualAck, as its caller says with Ack), and Close
// cancels a stream that has not ended. A Stream MUST be closed. It holds
// at most its window of chunks, whatever the plugin sends: a chunk beyond
// the window, or out of sequence, fails the stream with ErrFlowControl and
// cancels the request, without stopping the plugin. The plugin's stream
// calls (capability/call with stream) reach OnCall with Call.Stream, the
// sending end, whose Send blocks while the plugin's window is
// unacknowledged. Streams start no goroutine: the reader routes chunks and
// acks, the consumer's goroutine waits.
//
// The heartbeat pings a running plugin every HeartbeatInterval (pings are
// written ahead of queued calls). A ping unanswered for HeartbeatTimeout
// makes the plugin Unresponsive; it is still pinged, and an answered ping
// makes it Responsive again. A plugin that answers nothing for HangTimeout
// (counted from its last response to a ping or a call; notifications do
// not count) is reported Unresponsive if it was not already, then stopped:
// a crash whose cause wraps ErrUnresponsive.
//
// Every Client has an ID (Client.ID), unique in the host process and never
// reused, so each restart of a plugin gets a new one. CrashError.ClientID
// and Options.OnHealth carry it: a supervisor that restarted a plugin
// ignores reports whose ID is not its current client's.
//
// On Linux a pinned executable is opened once, hashed through that
// descriptor and exec'd through the same descriptor (/proc/self/fd/N), so
// a file renamed or linked over the path after the check does not run; a
// file rewritten in place in that moment is caught after the exec (its
// status changed and it no longer hashes to the pin) and its process
// killed before the handshake, having run its first instructions. Not
// covered: a script (a "#!" line), which its interpreter reopens by path,
// so the check and the exec are two steps again; systems without /proc
// and other systems, which exec the path; and whatever the executable
// loads (an interpreter's script, shared libraries). The pin catches a
// package changed since it was pinned; it is no defence against someone
// who can write the package directory while the host starts it.
//
// Options.Limits are applied with prlimit(2) to the plugin process just
// after it started and before the handshake: from exec until then (a
// moment in which the plugin's own startup code runs) it has the host's
// limits. A failure stops the process and fails Start in PhaseLimits.
// Limits are Linux only; elsewhere non-zero Limits fail Start before
// anything runs (see Platforms).
//
// Close asks the plugin to shut down, closes its stdin, waits the shutdown
// grace, SIGTERMs the process group, waits the kill grace and SIGKILLs the
// process group; it returns once the process is reaped. Grandchildren left
// in the group are SIGKILLed too; if the host is a child subreaper they are
// also reaped, otherwise init reaps them.
//
// The plugin's exit is its end, whatever its descendants hold. A helper
// that left the plugin's process group (setsid, Python's
// start_new_session, Node's detached spawn) and kept its stdout or stderr
// would keep the host's readers from ever reaching EOF: when they have not
// within 100 ms of the group's death, every process still holding one of
// the plugin's three stdio pipes is SIGKILLed (on Linux, found through
// /proc/*/fd by the pipes' inodes; a process of another user is not
// found, and outside Linux none is looked for), and the host closes its
// ends at the latest a second later. Out of reach: a helper that left the
// group and closed or redirected the plugin's pipes is not found; it
// outlives the plugin, and holds nothing the host waits for. Every wait
// after the exit is bounded, so Close returns within its context plus
// about a second (barring a process the kernel cannot kill), with every
// goroutine ended.
//
// On Linux, nothing in a plugin's process group outlives the host, even a
// host killed with SIGKILL (whose plugins see stdin EOF, but whose
// plugins' own children would be orphaned): the first spawn starts the
// host's reaper, one process per host process (argv[0] ReaperName),
// re-executed from the host's own binary (/proc/self/exe) with
// EXTKERNEL_REAPER set, which an init function of internal/process (which
// this package imports) checks before main runs (as moby's reexec does):
// any binary that imports this package, test binaries included, can serve
// as its own reaper. The host
// registers each plugin's process group on the reaper's stdin once it is
// spawned and withdraws it once the group is gone, one small write each;
// the reaper SIGKILLs every group still registered when its stdin reaches
// EOF or its parent exits (a pidfd), which is when the host dies. It
// ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT, so that Ctrl-C on the
// terminal's process group does not end it before the host, and exits at
// EOF: it lives exactly as long as the host process, and is never waited
// for. It starts off the spawn's path; if it cannot run, the host logs
// that once and carries on without it. Out of reach: a process that left
// the plugin's group (see above) is not killed when the host dies, nor is
// a group the host spawned in the moment before registering it.
//
// StartBatch starts a batch of Specs with a bounded worker pool under one
// shared startup budget and reports one Outcome per spec, in spec order. It
// decides nothing about a failure: it reports it, and cancels the rest of
// the batch only when the failed spec is marked CancelBatchOnFailure. The
// caller owns the started clients. What a failure means (required or
// optional, the cascade along requires edges) is package generation's.
//
// # Platforms
//
// Process mechanics live in internal/process. On Linux all of the above
// applies. On darwin and the BSDs (and on Linux built with -tags
// extkernel_portable, so CI runs this package's tests through the same
// paths) the portable fallbacks apply, and these are lost:
//
//   - pipe holders: a helper that left the plugin's process group and
//     keeps its stdout or stderr is not looked for nor killed; the host
//     closes its ends after the drain timeout, and the helper lives on;
//   - the host-death reaper: a plugin's own children can outlive a host
//     killed with SIGKILL (the plugin itself sees stdin EOF);
//   - descriptor pin exec: a pinned executable is exec'd by path, so a
//     file swapped or rewritten between the check and the exec runs
//     unverified;
//   - the pidfd exit watch: each running plugin's exit watcher blocks a
//     thread in wait(2) instead of parking in the runtime's poller;
//   - limits: non-zero Options.Limits fail Start in PhaseLimits, before
//     anything runs, with an error wrapping errors.ErrUnsupported;
//   - the direct write: every frame goes through the writer goroutine.
//
// Process groups, SIGTERM and SIGKILL to the group, reaping, heartbeats
// and everything above the process work as on Linux. On Windows, Start
// fails in PhaseSpawn with an error wrapping errors.ErrUnsupported
// ("plugin processes are not supported on windows"): a plugin's process
// tree would need a job object, which is not implemented.
//
// # Concurrency
//
// Each Client owns these goroutines, all ended before Close returns (an
// OnCrash callback still running is the one exception, so that OnCrash may
// call Close):
//
//   - the supervisor, from the spawn: it waits for the exit (a fault
//     kills the process group, from the goroutine that saw it), then
//     kills and reaps the process group, lets the readers drain, makes
//     the client terminal and fires OnCrash;
//   - the stdout reader, which dispatches responses and notifications,
//     and the stderr reader, which forwards lines to the plugin's logger;
//     the last of the two to return closes one channel the supervisor
//     waits on;
//   - the heartbeat, from a successful Start on, unless disabled, the only
//     caller of OnHealth;
//   - the stdin writer, only while frames are queued: pings and
//     cancellations go first, each write bounded by WriteStall. A caller
//     writes its own frame instead when nothing is queued or being
//     written, and only what the pipe takes at once: the rest goes to the
//     writer, first, so a call never blocks in a write and frames never
//     interleave.
//   - a call worker per capability/call in flight, at most
//     MaxInboundCalls: it runs Options.OnCall and writes the answer. Its
//     context is cancelled by the plugin's $/cancel for it (which the
//     client answers -32800 at once, dropping OnCall's later answer), by
//     the end of its parent request, and when the plugin faults, crashes
//     or Close starts; the client waits for it like for the others, so
//     OnCall MUST honour its context. Up to maxIdleCallWorkers workers
//     then wait for the plugin's next call (a reused worker keeps the
//     stack it grew) and end with the readers. A call that
//     Options.OnCallAsync takes (the kernel's relay to another plugin's
//     provider, Client.InvokeAsync) has no goroutine: the reader that
//     reads the provider's answer (or the goroutine that ends the call)
//     writes the caller's.
//
// An idle running client thus costs four goroutines, and two more at most
// once its plugin has called. The first fault (a
// protocol error, a broken pipe, a stalled write, the hang timeout) is the
// cause of one context.WithCancelCause, which Close cancels too.
//
// A Client has one lock, Client.mu, a leaf: no I/O, channel send or
// callback runs while it is held. A batch's OnEvent calls are serialized by
// their own lock.
//
// A Client's lifecycle is one value under Client.mu, its stage, changed
// only by one transition function, which refuses every move the graph
// drawn on the stage type (state.go) does not have. The plugin is up in
// starting (Start's handshake) and running (Start succeeded); down, torn
// down as crashed while calls wait for the *CrashError, in faulted (the
// first fault stops it), killed (the host killed it for that fault) and
// exited (the supervisor saw its exit); closing while Close stops it; and
// terminal, Err set and Done closed, in crashed or closed. Whether Start
// succeeded (armed: a crash fires OnCrash) is kept with the stage, as a
// plugin can go down while Start still checks its handshake.
//
// # Errors
//
// Start returns a *StartError whose Phase says where it failed; its Err is
// a *PinMismatchError or a hashing error (PhaseVerify), an error from
// prlimit (PhaseLimits), a *protocol.VersionError (PhaseVersion), a
// *DeclarationError (PhaseDeclarations), a *CrashError or a context error
// (PhaseHandshake). A running plugin that exits, closes stdout, writes
// anything that is not a protocol message, a frame over the size limit, a
// request or notification before the handshake, stops reading stdin or
// answers nothing for HangTimeout ends in a *CrashError: every pending call fails with it at once,
// and so does every later one; a call made while the crashed client is torn
// down waits for it (within the call's deadline) rather than fail otherwise. Its Cause wraps
// ErrProtocol (and the *wire.FrameError quoting the bytes), ErrWedged
// or ErrUnresponsive, or is nil when the process exited on its own. Error
// answers from the plugin are *protocol.Error values, wrapped with the
// plugin name and method. Calls after Close fail with ErrClosed. In a
// batch, a plugin aborted because a spec marked CancelBatchOnFailure failed
// fails with an *AbortedError; a plugin not launched before the budget ran
// out fails with an error wrapping ErrBudgetExhausted.
//
// Every string a plugin supplies passes through Options.Redact before the
// client logs it, quotes it in an error or keeps it as a diagnostic:
// stderr lines (redacted whole, then cut for the log) and the tail errors
// quote, log notifications (keys too), error answers (message and data),
// the quote of a malformed stdout line, invalid decisions, and the answer
// to initialize (Declarations). Results, notify data and payloads are the
// host's and are passed on as they are. The client never logs Config.
// Forwarded log lines are rate-limited per plugin (Options.LogBurst,
// LogRate): a flooding plugin costs the host a bounded log volume and a
// periodic "N log lines suppressed" warning.
package sidecar
