// Package kernel is the host-facing facade of extkernel: a host creates a
// Kernel from a config.Config (package kernel/config), calls Start to build
// and publish the first runtime generation, dispatches calls to plugins
// through it, and calls Close when done. What a running kernel reports
// (events, plugin statuses, the Observer hooks) is declared in package
// kernel/observe.
//
// # Lifecycle
//
//  1. New validates the Config, makes its Home absolute and returns an
//     idle Kernel.
//  2. Start loads the home, builds the first generation (numbered
//     config.Config.FirstGeneration, default 1; package generation) and
//     publishes it. On failure nothing is published and nothing keeps
//     running.
//  3. Intercept, Strategy, CallProvider, StreamProvider and RunAction
//     dispatch to the current generation, and so do Invoke and InvokeEach
//     for the contributions of the kinds the host declares in
//     config.Config.Kinds (contribution/invoke, protocol 1.1;
//     docs/config.md, "Host-defined kinds").
//  4. Close stops everything. It first cancels a build in progress (Start,
//     Reload, or a supervised or requested restart), which fails with an
//     error wrapping ErrClosed and stops what it started, so Close never
//     waits out a startup budget. It is idempotent; the Kernel may not be
//     reused.
//
// # Required packages fail closed
//
// A package is required by the config's policy ("policy": {"p1":
// "required"}), or by its manifest's runtime.required unless the policy
// says "optional". Besides failing to start, a required package fails the
// build (Start fails; Reload rolls back and the current generation keeps
// serving) when it cannot be loaded at all; the *generation.BuildError
// carries a *generation.UnavailableError naming the package and the file:
//
//   - required by the config's policy: when it is not installed, its
//     manifest does not load, or the operator disabled it in state.json.
//     The host's config is the contract (a required redactor must not go
//     away with a `kernelctl disable`): enable it, or drop the policy.
//   - required by its own manifest: at a Reload, when the current
//     generation runs it as required and it is no longer installed or its
//     manifest no longer loads (a manifest that marked itself required
//     cannot vanish or break silently). An operator's disable is honoured:
//     to remove such a package, disable it and reload first. At Start there
//     is no running generation, so such a package that cannot be loaded is
//     a load warning, as any other.
//
// A package that runs confined (config.Config.Confinement) and whose
// manifest asks for permissions the operator has not accepted
// (pluginpkg.Package.WidenedPermissions) is not started: it is left out
// of the generation, a warning when optional, failing the build with a
// *generation.UnavailableError (its Added set) when required, until the
// operator accepts them (pluginpkg.AcceptPermissions; docs/security.md,
// "Consent"). generation.Inputs.Withheld decides it.
//
// # Supervision
//
// A crashed plugin is restarted alone, after backoff, within its crash
// budget (config.Config.Supervision): the restart builds a new generation from
// the current one's inputs in which only that plugin (and members that
// failed because it did) gets a new sidecar; every other running plugin is
// adopted and every other plugin that is down stays down, its state
// untouched. Past its budget a plugin stays failed until RestartPlugin
// restarts it, or a Reload that changes its package starts it; both give it
// a fresh budget. Any other Reload keeps it down, with its budget (its plan
// class is unchanged, its reason says "kept down"). A Reload starts again
// every other plugin that is down (an optional one that failed to start,
// one waiting for a restart), and each plugin it starts gets a fresh budget.
// A build that fails gives every plugin it set starting its state from
// before.
//
// # Bakes
//
// An upgrade on bake (pluginpkg.Bake, `kernelctl upgrade --bake`) is
// watched from the first generation that runs its version: when that
// version crashes past its budget, fails to start, or fails more of its
// calls than the bake's max error rate, the kernel returns to the version
// it replaced on its own (pluginpkg.RollbackBake, then a Reload), and a
// host call made meanwhile waits for that and is served by the previous
// version. Each step is an observe.EventBake; observe.PluginStatus.Bake
// shows the bake (docs/operations.md, "Bake").
//
// # Plugin calls
//
// A plugin calls the methods of the capabilities its manifest requires
// (capability/call, docs/protocol.md §5.11, protocol 1.1), and the kernel
// routes each call; no plugin reaches another's pipes. Who may call what is
// decided in one place, per published generation, from the closure's
// choices: a call of a capability the caller does not require is refused
// (-32005, naming the plugin, the capability and the missing requires
// entry); an unsatisfied optional requirement, a host capability without a
// handler and a provider that does not run answer -32006; a method the
// provider's provides[].methods does not map answers -32601. A host
// capability is served by its config.Config.Handlers entry, a plugin's by the
// provider its methods name, called like CallProvider.
//
// A call is served by the generation its caller belongs to, under a lease
// with the drain rules of dispatch: the one that sent the request the call
// names as its parent (even once retired, while that request holds it
// open), or, without a parent, the current one, if the caller's process is
// the plugin's process in it; otherwise the call is stale (-32008), and an
// adopted plugin calls into the generation that adopted it. A call with a
// parent gets at most what is left of the parent's deadline and is
// cancelled with it, transitively (the host's ctx, a deadline, a $/cancel,
// a crash up the chain); the callee is invoked under the call's context.
// A call nested deeper than config.Config.MaxCallDepth answers -32007 with the
// chain of plugins. A callee that crashes fails the call at once (-32006,
// with the crash); its own error answer is forwarded with its code.
//
// # Features and usage counters
//
// The kernel serves a plugin the optional protocol features it announced
// in initialize (protocol 1.4, docs/protocol.md §4.6; a plugin answering
// an earlier version is served every feature of 1.3, as before), and
// counts, per plugin and for the kernel's lifetime, each use of a feature
// it served and each handshake by protocol minor: a fixed key set
// (Plugins' observe.PluginStatus.Usage, an observe.UsageObserver). A
// deprecated feature is warned about at its first use by each plugin
// process, in the log and as an observe.EventWarning naming the plugin;
// none is deprecated today.
//
// # Concurrency
//
// The current generation sits behind an atomic pointer: Current and every
// dispatch read it without a lock and never see a half-built generation.
// Builds (Start, Reload, restarts) and Close are serialized by one mutex,
// never held on the dispatch path; Close cancels the build in progress
// before it waits for that mutex. A dispatch call holds a lease on the
// generation it started on; a retired generation is stopped only when its
// leases drain, or after config.Config.DrainTimeout, and after the
// generation it replaced is stopped: a sidecar a generation adopted still
// serves the calls in flight on the one that handed it over. Every
// goroutine the kernel starts (retirement, event delivery from sidecars)
// ends before Close returns.
//
// # Events
//
// Subscribe delivers events (observe.Event), each stamped with its Time: start
// progress, published generations and their warnings, failed builds, crashes,
// supervision states, and observe.EventNotify, a plugin's notify notification
// (protocol.md §5.10) with the plugin, its event Name and Data as sent, and the
// generation its process serves in (zero for a process that is not the plugin's
// process in the current generation).
//
// # Errors
//
// A plugin's failure during a call is a *PluginError naming the plugin, the
// contribution and whether the plugin is required: a required plugin fails the
// call closed; an optional one is skipped and reported in the result.
// ErrNotStarted and ErrClosed say the kernel has no generation to dispatch to;
// ErrUnknownTarget that no contribution matches the ID, or, with
// config.Config.Strict, that the host did not declare the point or slot
// (without it, an undeclared point runs no interceptor and an undeclared slot
// gets the host default); ErrUnknownPlugin that RestartPlugin found no such
// running member. With config.Config.ValidateProviderInput, input a provider's
// schema refuses is an *InputError, and the plugin is not called; the
// validator is linked in by importing package kernel/inputschema for its
// effect (package kernel does not import it: its start costs ~7 ms).
package kernel
