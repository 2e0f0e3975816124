// Package admin serves a local admin API for a running *kernel.Kernel:
// HTTP/1.1 over a Unix socket (as Docker's and Caddy's admin APIs; `curl
// --unix-socket` works), JSON answers and NDJSON streams. It answers the
// kernel's status (with the host process's pid, uptime, version and
// config), its plugins, the current plan, reloads, restarts, calls, the
// plugins' logs and the kernel's events, and asks the host to stop;
// docs/admin.md documents every request and answer. kernelctl's `run`
// serves it at <home>/run/admin.sock, and its `status`, `stop`, `reload`,
// `restart`, `call`, `logs` and `events` are clients of it. The package uses only the kernel's public API.
//
// # Lifecycle
//
//  1. NewLogRing makes the ring of plugin logs; the host registers it on
//     an hclog.InterceptLogger (RegisterSink) and gives that logger to the
//     kernel (config.Config.Logger), with LogRingOptions.Root set to the
//     logger's name.
//  2. NewServer(k, Options{Logs: ring}) subscribes to k's events; create
//     it before k.Start to keep the start's progress.
//  3. Listen(path) creates the socket (mode 0600, its directory 0700,
//     a stale socket removed with a Note); its directory MUST be private:
//     a symbolic link, or another user's that others may write, is
//     refused, and this user's that others may write is made 0700 with a
//     Note (pluginpkg.PrepareRunDir). Serve(ln) serves it until Close.
//  4. POST /v1/stop calls Options.OnStop, which asks the host to stop (a
//     host without it answers not_supported); the host then closes the
//     server and the kernel as in step 5.
//  5. Close(ctx) ends every stream and request, waits for every handler,
//     closes the listeners (removing their sockets) and unsubscribes. It
//     is idempotent. The host closes the server before the kernel.
//
// # Invariants
//
//   - The server MUST NOT block the kernel: its Subscribe callback and
//     LogRing.Accept take one short lock each and never wait; a follower
//     that falls Options.FollowBuffer lines or Options.FollowBytes bytes
//     behind is dropped, its stream ending with a too_slow error line.
//   - What the server keeps is bounded in lines and in bytes: the event
//     ring (Options.Events, Options.EventBytes), each plugin's log ring
//     (LogRingOptions.Lines, LogRingOptions.Bytes) and each follower's
//     buffer; the oldest kept lines are forgotten first.
//   - A notify's data, which the kernel hands its subscribers raw, is
//     redacted with Options.Redact before the event ring keeps it.
//   - Every read is bounded, in size (Options.MaxBody for a request body,
//     16 MiB for an answer and for a stream line on the client side)
//     and in time (Options.HeaderTimeout for a request's header,
//     BodyTimeout for its body, IdleTimeout between requests), and every
//     write to a client has its own deadline (Options.WriteTimeout): a
//     client that connects and never sends, sends slowly or never reads
//     is disconnected, and nothing else is disturbed.
//   - At most Options.MaxConns connections are served at once; more wait,
//     unaccepted, until one closes.
//   - Every answer is JSON, errors included ({"error": {"code": ...}}):
//     an unknown path or method, invalid JSON, an oversized body and a
//     kernel or plugin error each have their code (the Code constants).
//   - Every goroutine the server runs (one per connection, owned by its
//     http.Server) has ended when Close returns. LogRing and the event log
//     start none.
//
// # Concurrency
//
// A Server serves requests concurrently; a reload or restart waits for the
// kernel's build lock as Kernel.Reload does, a status or call takes none.
// A Client is safe for concurrent use.
//
// # Errors
//
// A non-2xx answer decodes, on the client side, into an *Error (its Code,
// Message and, for a plugin's failure, Plugin and PluginError). Dial
// returns a *NoServerError when nothing serves the socket. Listen returns
// an error wrapping ErrInUse when a server answers at its path.
//
// # Call counters
//
// Each plugin of the status answer carries the kernel's always-on call
// counters (observe.PluginStatus.Calls) as "calls": calls, errors, calls in
// flight and latency percentiles, the latter as histogram bucket bounds;
// and, while its process runs, the confinement it got
// (observe.PluginStatus.Confinement) as "confinement": mode, mechanism,
// Landlock ABI and the rules not enforced.
package admin
