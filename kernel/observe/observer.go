package observe

import (
	"context"
	"time"

	"github.com/extkernel/extkernel/contribution"
)

// Observer is told about every call the kernel sends to a plugin and every
// plugin start (config.Config.Observer, package kernel/config). The kernel
// calls it from the goroutine making the call or the start, with no lock held;
// it must return quickly and must not block. A nil Observer costs a dispatch
// nothing; docs/architecture.md ("Observing a kernel") says what a
// no-op one costs. The OpenTelemetry adapter (module
// github.com/extkernel/extkernel/otel) is one.
type Observer interface {
	// Call is called when the kernel is about to send a call, with the
	// call's context. The context it returns is the one the call is made
	// with (an adapter returns ctx with a span, say); end is called once,
	// when the call has ended, with its outcome. end may be nil.
	Call(ctx context.Context, info CallInfo) (_ context.Context, end func(CallOutcome))
	// Dispatch is called when a host's dispatch begins (the kernel.Kernel
	// methods Intercept, Strategy, CallProvider, RunAction, StreamProvider,
	// Invoke, InvokeEach), with its context; the calls it sends to plugins are
	// made under the context it returns (an adapter's dispatch span is the
	// parent of their spans). end, which may be nil, is called once with the
	// dispatch's error when it returns (for StreamProvider, when the stream
	// ends).
	Dispatch(ctx context.Context, info DispatchInfo) (_ context.Context, end func(error))
	// Start is called when a plugin start has ended, ready or failed: in
	// a generation build, a supervised restart, or a lazy member's
	// activation (StartInfo.ActivatedBy).
	Start(info StartInfo)
}

// DispatchInfo describes a host's dispatch: the contribution kind and the
// key it names (a point, a slot, a provider or action ID, a custom kind's
// key).
type DispatchInfo struct {
	Kind contribution.Kind
	Key  string
}

// CallInfo describes a call the kernel sends to a plugin, or a plugin's
// capability/call the host serves itself. There are three shapes:
//
//   - the host's own dispatch: Plugin, Kind and Key set, Caller,
//     Capability and Method empty;
//   - a plugin's capability/call the kernel relays to another plugin's
//     provider: all fields set, Kind "provider";
//   - a plugin's capability/call a host handler serves: Plugin is
//     capability.HostProvider, Kind and Key are empty, Caller,
//     Capability and Method set. Such a call is not counted in any
//     plugin's CallStats.
type CallInfo struct {
	// Plugin is the plugin called, or capability.HostProvider for a
	// call a host handler serves.
	Plugin string
	// Kind and Key name the contribution called: an interceptor at a
	// point, the owner of a strategy slot, a provider or an action by its
	// namespaced ID. Both are empty for a call a host handler serves.
	Kind contribution.Kind
	Key  string
	// Caller is the plugin whose capability/call the kernel relays to
	// another plugin's provider or serves with a host handler, or empty
	// for the host's own dispatch.
	Caller string
	// Capability and Method are the capability key and method of the
	// caller's capability/call, as it sent them; empty when Caller is.
	Capability, Method string
	// Generation is the number of the generation the call is served by.
	Generation uint64
}

// CallOutcome is how a call ended.
type CallOutcome struct {
	// Duration is the time from the call's start to its end.
	Duration time.Duration
	// Err is nil for a result, else the error the dispatch method returns
	// for this plugin (a plugin's error answer, its crash, a deadline), or,
	// for a call a host handler serves, the handler's error.
	Err error
	// ErrorType names Err's kind in few values, for a metric's attribute
	// (OpenTelemetry's error.type): the JSON-RPC error code in decimal for
	// a *protocol.Error (a plugin's error answer, a refusal, "-32006"),
	// "timeout" (context.DeadlineExceeded), "canceled"
	// (context.Canceled), "plugin_down" (the plugin was not running or
	// was stopping), "crash" (it crashed during the call: a
	// *sidecar.CrashError), "flow_control" (a stream broke its flow
	// control), else "_OTHER". It is empty when Err is nil.
	ErrorType string
}

// StartInfo describes a plugin start that ended. A plugin that was not
// launched, because a plugin it depends on failed or the startup budget
// ran out, is reported failed with a zero Duration.
type StartInfo struct {
	// Plugin is the plugin started.
	Plugin string
	// Duration is the time from spawn to the end of its handshake (or its
	// failure).
	Duration time.Duration
	// Err is nil when the plugin became ready.
	Err error
	// ActivatedBy says what started a lazy member on first use ("call to
	// provider plugin/x/echo by host"); empty for a start in a
	// generation build or a supervised restart. An adapter counts
	// activations by it.
	ActivatedBy string
}

// UsageObserver is an Observer that is also told of the plugins' usage
// counters as they count (kernel.Kernel.Plugins' PluginStatus.Usage):
// when config.Config.Observer implements it, the kernel calls Use for
// each use a plugin makes of an optional protocol feature the host served
// and for each handshake by its protocol minor, with the plugin's name
// and the usage key ("calls", "progress", "protocol/1.3", ...: a fixed
// set, docs/admin.md "Usage"; never a string of the plugin's). It is
// called from the goroutine that reads the plugin's output or makes the
// call, with no lock held: it must return quickly and must not block.
// The OpenTelemetry adapter counts them as extkernel.plugin.uses.
type UsageObserver interface {
	Observer
	Use(plugin, key string)
}
