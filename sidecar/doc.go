// Package sidecar is the runtime of one plugin process: the role
// go-plugin's Client plays for its users, usable on its own (a test
// harness, a conformance tool) or under a kernel, which runs every plugin
// of a generation through it.
//
// # What a Client is
//
// A *Client is one running plugin: its process, started without a shell
// in its own process group, and the JSON-RPC 2.0 connection over its
// stdin and stdout (docs/protocol.md), multiplexed: many calls and streams
// in flight at once, each with its deadline and cancellation, in both
// directions. It pings the plugin (the heartbeat), forwards its stderr
// and log notifications to a logger, passes every string the plugin
// supplies through one redaction, detects its crash at once and stops it
// within bounded graces. Mechanics a user never names live below it:
// process groups, the reaper and limits in internal/process, the wire
// codec in internal/wire, the pin check in internal/pinexec.
//
// # Lifecycle
//
//  1. Start(ctx, pkg, opts): checks the manifest's kernel range against
//     this host's protocol version, spawns pkg's runtime in the package
//     directory (no shell, its own process group, an environment of the
//     allowlisted host variables, the manifest's env, Options.Env and the
//     EXTKERNEL_* variables; a pinned package is checked right before the
//     exec, and a package pin runs in a verified copy of the package
//     directory, see below), applies Options.Limits, sends initialize
//     (bounded by the per-plugin handshake timeout and by ctx) and checks the
//     answer: the protocol version, and every declaration against what
//     the manifest authorizes (provides, runtime.intercepts,
//     runtime.replaces, runtime.contributes, the priority bounds) and the
//     host's Options.Kinds. Any failure is a *StartError, with nothing
//     left running.
//  2. Running: the caller owns the Client and may call Call, Intercept,
//     Invoke, InvokeAsync and OpenStream concurrently; each takes a
//     context whose end sends $/cancel and returns at once. The plugin's
//     own calls (capability/call, protocol 1.1) reach Options.OnCall (or
//     OnCallAsync); its notify notifications Options.OnNotify.
//  3. Crash: a plugin that exits, breaks the protocol, stops reading its
//     stdin or stops answering is torn down; every pending call fails with
//     the *CrashError at once, Done closes, Err returns it, and
//     Options.OnCrash is called once.
//  4. Close: the caller MUST call Close when it no longer needs the
//     plugin, even after a crash: shutdown, stdin closed, the shutdown
//     grace, SIGTERM to the process group, the kill grace, SIGKILL; it
//     returns once the process is reaped and every goroutine the client
//     started has ended. Close is idempotent.
//
// # What it decides, and what it leaves to its caller
//
// The Client decides what concerns one connection: whether a frame is a
// protocol message, whether a declaration is authorized by the manifest
// it was given, when a silent plugin is unresponsive or hung, how long a
// stop may take, how many of a plugin's calls it serves at once (64). It
// decides nothing about policy: whether a plugin is required or optional,
// what a failure means for others, whether and when to restart, who may
// call what. It reports (OnCrash, OnHealth, OnNotify) and serves calls
// through the function it is given (OnCall), and its caller decides. In a
// kernel, that caller is the kernel's builder and supervisor.
//
// A call may name a host request in flight to the same plugin as its
// parent: its context then derives from that request's context, with at
// most its remaining time, and is cancelled when that request ends
// (answered, timed out, withdrawn), so a value the caller of Call put in
// its context reaches OnCall. Each pending request keeps its context and
// the end of its own timeout for this; nothing more is allocated per
// call.
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
// makes the plugin unresponsive (OnHealth); it is still pinged, and an
// answered ping makes it responsive again. A plugin that answers nothing
// for HangTimeout (counted from its last response to a ping or a call;
// notifications do not count) is reported unresponsive if it was not
// already, then stopped: a crash whose cause wraps ErrUnresponsive.
//
// Every Client has an ID (Client.ID), unique in the host process and never
// reused, so each restart of a plugin gets a new one. OnCrash, OnHealth,
// OnNotify and Call carry the Client: a supervisor that restarted a
// plugin ignores reports about any client but its current one.
//
// A pinned package is checked right before its exec, and what runs is
// what was checked. For a package pin (the digest of the package's files
// and of the file its command resolves to), the package's files are
// copied into a new private directory of the temporary directory
// (os.TempDir: $TMPDIR, else /tmp; named extkernel-<name>-<random>, mode
// 0700, files read-only), digested as they are copied, and the plugin
// starts in the copy once its digest matches the pin: the copy is its
// working directory and its EXTKERNEL_PLUGIN_DIR. A file of the package
// renamed over or rewritten after the check (the script an interpreter
// reads once it runs, a module it imports later, bytecode planted in a
// __pycache__ the digest skips) is not what runs. The plugin may create
// files in the copy's directories (Python's bytecode), but keeps nothing
// there: the client removes the copy once the plugin's process group is
// gone (Close, a crash, a failed start), before Done closes. An unpinned
// package, and one with an executable pin (its executable alone), runs in
// its package directory, with nothing copied.
//
// The command a pin covers (an executable pin's executable; a package
// pin's interpreter found on PATH, or the package's own executable) is
// opened once and hashed through that descriptor (a package pin's through
// the digest cache, keyed by the descriptor's version), and on Linux
// exec'd through the same descriptor (/proc/self/fd/N): a file renamed or
// linked over its path after the check does not run; one rewritten in
// place in that moment is caught after the exec (its status changed and
// it no longer hashes to the pin) and its process killed before the
// handshake, having run its first instructions. Not covered: a command
// that is a script (a "#!" line), exec'd by path, so its check and exec
// are two steps again (a package pin's own script runs from the copy,
// which only the host's user can write; an interpreter that is a version
// manager's shim is checked, but not what the shim runs); systems without
// /proc and the portable fallbacks (see Platforms); what a command loads
// from outside the package (shared libraries, the interpreter's standard
// library and site-packages, the target of a link leaving the package);
// and the host's own user, whose processes (plugins included) can write
// the copy. A host killed with SIGKILL leaves its copies behind.
// docs/security.md ("Pins: what a pin closes, per OS") lists the same per
// system.
//
// Options.Limits are applied with prlimit(2) to the plugin process just
// after it started and before the handshake: from exec until then (a
// moment in which the plugin's own startup code runs) it has the host's
// limits. A failure stops the process and fails Start in phase "limits".
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
// host's reaper, one process per host process (argv[0]
// "extkernel-reaper"),
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
//   - descriptor pin exec: a pinned command is exec'd by path, so an
//     executable pin's executable, or a package pin's interpreter, swapped
//     or rewritten between the check and the exec runs unverified (a
//     package pin's files, and its own executable, still run from the
//     verified copy);
//   - the pidfd exit watch: each running plugin's exit watcher blocks a
//     thread in wait(2) instead of parking in the runtime's poller;
//   - limits: non-zero Options.Limits fail Start in phase "limits", before
//     anything runs, with an error wrapping errors.ErrUnsupported;
//   - the direct write: every frame goes through the writer goroutine.
//
// Process groups, SIGTERM and SIGKILL to the group, reaping, heartbeats
// and everything above the process work as on Linux. On Windows, Start
// fails in phase "spawn" with an error wrapping errors.ErrUnsupported
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
//     cancellations go first, each write bounded by the write stall (5s). A caller
//     writes its own frame instead when nothing is queued or being
//     written, and only what the pipe takes at once: the rest goes to the
//     writer, first, so a call never blocks in a write and frames never
//     interleave.
//   - a call worker per capability/call in flight, at most 64: it runs
//     Options.OnCall and writes the answer. Its
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
// callback runs while it is held.
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
// Start returns a *StartError whose Phase says where it failed (its field
// doc lists what Err is in each phase). A running plugin that exits,
// closes stdout, writes anything that is not a protocol message, a frame
// over the size limit, a request or notification before the handshake,
// stops reading stdin or answers nothing for HangTimeout ends in a
// *CrashError: every pending call fails with it at once, and so does
// every later one; a call made while the crashed client is torn down
// waits for it (within the call's deadline) rather than fail otherwise.
// Its Cause wraps ErrProtocol, ErrWedged or ErrUnresponsive, or is nil
// when the process exited on its own. Error answers from the plugin are
// *protocol.Error values, wrapped with the plugin name and method. Calls
// after Close fail with ErrClosed.
//
// Every string a plugin supplies passes through Options.Redact before the
// client logs it, quotes it in an error or keeps it as a diagnostic:
// stderr lines (redacted whole, then cut for the log) and the tail errors
// quote, log notifications (keys too), error answers (message and data),
// the quote of a malformed stdout line, invalid decisions, and the answer
// to initialize (Declarations). Results, notify data and payloads are the
// host's and are passed on as they are. The client never logs Config.
// Forwarded log lines are rate-limited per plugin (a burst of 100, then 50
// a second), and each line carries at most 16 KiB of the plugin's text (a
// longer stderr line is logged in pieces, a longer log notification or
// hclog JSON line cut, an id the plugin made up quoted in 64 bytes): a
// flooding plugin costs the host a bounded log volume and a periodic "N
// log lines suppressed" warning.
package sidecar
