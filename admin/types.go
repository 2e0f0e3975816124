package admin

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/redact"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
)

// APIVersion is the version of the admin API this package serves and
// speaks; it is the first segment of every path (/v1/...).
const APIVersion = 1

// VersionAnswer is the answer of GET /v1/version.
type VersionAnswer struct {
	// API is APIVersion.
	API int `json:"api"`
	// Host is Options.Version: the embedding program's own version, empty
	// when it set none.
	Host string `json:"host,omitempty"`
	// Protocol is the plugin protocol version the kernel speaks.
	Protocol string `json:"protocol"`
	// Go is the Go version the server was built with.
	Go string `json:"go"`
}

// StatusAnswer is the answer of GET /v1/status.
type StatusAnswer struct {
	// Kernel is the host process that runs the kernel and serves the API.
	Kernel     KernelStatus     `json:"kernel"`
	Generation GenerationStatus `json:"generation"`
	// Plugins holds every supervised plugin, sorted by name (declarative
	// packages run no process and are not supervised: see PluginsAnswer).
	Plugins []PluginStatus `json:"plugins"`
	// Warnings are the current generation's warnings, in its order.
	Warnings []string `json:"warnings"`
}

// KernelStatus describes the host process that runs the kernel: the
// process serving the API, which embeds the kernel.
type KernelStatus struct {
	// PID is its process ID.
	PID int `json:"pid"`
	// Started is Options.Started: when the host started the kernel (by
	// default, when NewServer was called).
	Started time.Time `json:"started"`
	// UptimeSeconds is how long ago Started was, in seconds.
	UptimeSeconds float64 `json:"uptime_seconds"`
	// Version is Options.Version, omitted when the host set none.
	Version string `json:"version,omitempty"`
	// Config is Options.ConfigPath, omitted when the host set none.
	Config string `json:"config,omitempty"`
}

// StopAnswer is the answer of POST /v1/stop: the host was asked to stop
// (Options.OnStop) and is stopping.
type StopAnswer struct {
	// Stopping is always true.
	Stopping bool `json:"stopping"`
	// PID is the process ID of the host that is stopping.
	PID int `json:"pid"`
}

// GenerationStatus describes the current generation.
type GenerationStatus struct {
	Number  uint64    `json:"number"`
	Created time.Time `json:"created"`
	// AgeSeconds is how long ago it was published, in seconds.
	AgeSeconds float64 `json:"age_seconds"`
	// Hash is the generation's identity (generation.Generation.Hash):
	// equal on two hosts exactly when they were built from the same
	// inputs, whatever their paths.
	Hash string `json:"hash"`
}

// PluginStatus is one plugin's supervision state in a StatusAnswer.
type PluginStatus struct {
	Name string `json:"name"`
	// Version is its manifest's version in the current generation, the
	// one the kernel reports whatever its handshake said (a different one
	// is a warning of the generation); omitted for a plugin that is no
	// member.
	Version string `json:"version,omitempty"`
	// State is a observe.PluginState: starting, ready, unresponsive,
	// restarting or failed.
	State string `json:"state"`
	// PID is its sidecar's process ID in the current generation, omitted
	// when none runs.
	PID int `json:"pid,omitempty"`
	// Since is when it entered State.
	Since time.Time `json:"since"`
	// UptimeSeconds is how long it has been in State, in seconds, while a
	// process runs (ready or unresponsive); omitted otherwise.
	UptimeSeconds *float64 `json:"uptime_seconds,omitempty"`
	// Restarts counts its crashes within the crash window: each was, or
	// will be, followed by a restart while the budget lasts.
	Restarts int `json:"restarts"`
	// Reason explains unresponsive, restarting and failed.
	Reason string `json:"reason,omitempty"`
	// Calls are its call counters, from Options.Stats; omitted without
	// one, or when it has none for this plugin.
	Calls *CallStats `json:"calls,omitempty"`
	// Confinement is the confinement its process got, omitted when none
	// runs.
	Confinement *Confinement `json:"confinement,omitempty"`
	// Activation is "eager" (started with its generation) or "lazy"
	// (started on first use); omitted for a plugin that is no member.
	Activation string `json:"activation,omitempty"`
	// Lazy is a lazy member's activity, omitted for an eager one.
	Lazy *LazyActivity `json:"lazy,omitempty"`
	// Bake is the bake of its version: in progress, or how the last one
	// ended; omitted when none was watched since the kernel started.
	Bake *Bake `json:"bake,omitempty"`
	// Protocol is the protocol version its process answered in
	// initialize, and Features the optional protocol features that
	// process uses (announced from 1.4 on, else those of 1.3,
	// docs/protocol.md §4.6); both omitted when none runs.
	Protocol string   `json:"protocol,omitempty"`
	Features []string `json:"features,omitempty"`
	// Usage counts its uses of optional protocol features and its
	// handshakes by protocol minor, by usage key, since the kernel
	// started (observe.PluginStatus.Usage; docs/admin.md, "Usage");
	// omitted when none was counted.
	Usage map[string]uint64 `json:"usage,omitempty"`
}

// Bake is an upgrade's bake (observe.BakeStatus; docs/operations.md,
// "Bake").
type Bake struct {
	// State is "baking", "passed", "rolling-back", "rolled-back" or
	// "rollback-failed".
	State string `json:"state"`
	// Version and Digest are the version under bake, FromVersion and
	// FromDigest the one it replaced.
	Version     string `json:"version"`
	Digest      string `json:"digest"`
	FromVersion string `json:"from_version"`
	FromDigest  string `json:"from_digest,omitempty"`
	// Started is when the kernel first ran the version under bake, Until
	// when the bake passes unless it fails first, Ended when it passed or
	// failed (omitted while it runs).
	Started time.Time  `json:"started"`
	Until   time.Time  `json:"until"`
	Ended   *time.Time `json:"ended,omitempty"`
	// MaxErrorRate and MinCalls are the error rate watched (0: the crash
	// budget alone).
	MaxErrorRate float64 `json:"max_error_rate"`
	MinCalls     int     `json:"min_calls"`
	// Calls and Errors count the calls that ended during the bake and
	// those of them that failed.
	Calls  uint64 `json:"calls"`
	Errors uint64 `json:"errors"`
	// Reason says why the bake failed.
	Reason string `json:"reason,omitempty"`
}

// LazyActivity is what a lazy member has done (observe.LazyStatus).
type LazyActivity struct {
	// Declarations says where its published contributions came from:
	// "manifest", "cache" or "handshake".
	Declarations string `json:"declarations"`
	// ActivatedBy says what started it last, omitted until something did.
	ActivatedBy string `json:"activated_by,omitempty"`
	// Activated is when that start began, omitted until then; StartMS the
	// spawn and handshake, SpawnMS until its process ran, HandshakeMS from
	// then until its initialize answer was checked, FirstCallMS from its
	// beginning to the end of the use that caused it, in milliseconds.
	Activated   *time.Time `json:"activated,omitempty"`
	StartMS     float64    `json:"start_ms"`
	SpawnMS     float64    `json:"spawn_ms"`
	HandshakeMS float64    `json:"handshake_ms"`
	FirstCallMS float64    `json:"first_call_ms"`
	// LastUsed is when its last use ended (its publication, if never).
	LastUsed time.Time `json:"last_used"`
	// Activations counts its starts, IdleStops its idle stops.
	Activations int `json:"activations"`
	IdleStops   int `json:"idle_stops"`
}

// Confinement is how a running plugin is confined, from its
// pluginpkg.ConfinementReport (docs/security.md, "Confinement").
type Confinement struct {
	// Mode is "require", "best-effort" or "off".
	Mode string `json:"mode"`
	// Mechanism names what enforces it ("landlock ABI 7, seccomp,
	// no_new_privs"); omitted when Mode is "off".
	Mechanism string `json:"mechanism,omitempty"`
	// LandlockABI is the Landlock ABI found; omitted when there is none
	// or Mode is "off".
	LandlockABI int `json:"landlock_abi,omitempty"`
	// NotEnforced lists the rules of its permissions this machine does
	// not enforce (under "best-effort"); omitted when it enforces every
	// one, or Mode is "off".
	NotEnforced []string `json:"not_enforced,omitempty"`
}

// PluginsAnswer is the answer of GET /v1/plugins: the current generation's
// members.
type PluginsAnswer struct {
	Generation uint64 `json:"generation"`
	// Hash is the current generation's hash (generation.Generation.Hash).
	Hash string `json:"hash"`
	// Plugins holds every member, sorted by name.
	Plugins []Member `json:"plugins"`
}

// Member is one member of the current generation.
type Member struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Status is a generation.MemberStatus: running, declarative or failed.
	Status   string `json:"status"`
	Required bool   `json:"required"`
	// Adopted says its sidecar was carried over from an earlier generation.
	Adopted bool `json:"adopted"`
	// State is its supervision state (as in PluginStatus), omitted for a
	// declarative member.
	State  string `json:"state,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// ReloadAnswer is the answer of POST /v1/reload that applied (or found
// nothing to apply). A reload that rolled back is an *Error with code
// CodeReloadRolledBack.
type ReloadAnswer struct {
	// Published is false when the plan had no change: nothing was started
	// or stopped and no generation was published.
	Published bool `json:"published"`
	// Generation is the number of the generation serving after the
	// reload, and Hash its hash (generation.Generation.Hash).
	Generation uint64 `json:"generation"`
	Hash       string `json:"hash"`
	// Plan is what the reload found and applied.
	Plan *generation.Plan `json:"plan"`
}

// RestartAnswer is the answer of POST /v1/plugins/{name}/restart.
type RestartAnswer struct {
	Plugin string `json:"plugin"`
	// Generation is the number of the generation serving after the
	// restart.
	Generation uint64 `json:"generation"`
}

// Call kinds: the Kind of a CallRequest.
const (
	KindProvider  = "provider"  // Kernel.CallProvider
	KindAction    = "action"    // Kernel.RunAction
	KindStrategy  = "strategy"  // Kernel.Strategy
	KindIntercept = "intercept" // Kernel.Intercept
)

// CallRequest is the body of POST /v1/call.
type CallRequest struct {
	// Kind is KindProvider, KindAction, KindStrategy or KindIntercept, or
	// a kind the host declares (config.md, "Host-defined kinds"), whose
	// contributions at Target are each invoked (CallAnswer.Answers).
	Kind string `json:"kind"`
	// Target is the provider or action ID ("plugin/<name>/<ref>"), the
	// strategy slot, or the interception point.
	Target string `json:"target"`
	// Input is the provider's input, the action's UI context, the
	// strategy's input or the interceptors' payload; absent is null.
	Input json.RawMessage `json:"input,omitempty"`
}

// CallAnswer is the answer of POST /v1/call. Which fields are set depends
// on the kind (docs/admin.md).
type CallAnswer struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	// Output is what a provider, action or strategy returned.
	Output json.RawMessage `json:"output,omitempty"`
	// Owner is the plugin that owns the strategy slot; HostDefault says
	// the host's own default applies (no owner, or an optional owner that
	// failed: Error says why).
	Owner       string `json:"owner,omitempty"`
	HostDefault bool   `json:"host_default,omitempty"`
	// Payload, Denied, DeniedBy, Reason and Steps are an interceptor
	// chain's outcome.
	Payload  json.RawMessage `json:"payload,omitempty"`
	Denied   bool            `json:"denied,omitempty"`
	DeniedBy string          `json:"denied_by,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Steps    []Step          `json:"steps,omitempty"`
	// Answers are the answers of the contributions of a host kind at the
	// target, in the order they were invoked (kernel.Kernel.InvokeEach).
	Answers []KindAnswer `json:"answers,omitempty"`
	// Error is the failure of an optional plugin the kernel skipped (a
	// strategy owner); the call itself succeeded.
	Error string `json:"error,omitempty"`
	// Generation is the number of the generation that served a strategy or
	// interceptor call.
	Generation uint64 `json:"generation,omitempty"`
}

// Failed reports whether a plugin failed during the call although the call
// succeeded: a strategy owner, an interceptor or a host kind's
// contribution was skipped.
func (a *CallAnswer) Failed() bool {
	if a.Error != "" {
		return true
	}
	for _, s := range a.Steps {
		if s.Error != "" {
			return true
		}
	}
	for _, ans := range a.Answers {
		if ans.Error != "" {
			return true
		}
	}
	return false
}

// Step is one interceptor's part in a chain.
type Step struct {
	Plugin string `json:"plugin"`
	// Decision is continue, modify, deny, or skipped (Error says why).
	Decision  string  `json:"decision"`
	Reason    string  `json:"reason,omitempty"`
	Error     string  `json:"error,omitempty"`
	ElapsedMS float64 `json:"elapsed_ms"`
}

// LogLine is one line of GET /v1/logs.
type LogLine struct {
	Time time.Time `json:"time"`
	// Plugin is the plugin that logged it (its stderr or a log
	// notification), or "kernel" for the kernel's own lines.
	Plugin string `json:"plugin"`
	// Level is trace, debug, info, warn or error.
	Level   string         `json:"level"`
	Message string         `json:"message"`
	Fields  map[string]any `json:"fields,omitempty"`
}

// EventLine is one line of GET /v1/events: a observe.Event.
type EventLine struct {
	Time time.Time `json:"time"`
	// Type is a observe.EventType.
	Type       string `json:"type"`
	Generation uint64 `json:"generation,omitempty"`
	// Hash is the generation's hash (observe.Event.Hash), for an event
	// about a published generation.
	Hash      string  `json:"hash,omitempty"`
	Plugin    string  `json:"plugin,omitempty"`
	State     string  `json:"state,omitempty"`
	ElapsedMS float64 `json:"elapsed_ms,omitempty"`
	Message   string  `json:"message,omitempty"`
	Error     string  `json:"error,omitempty"`
	// Name and Data are a notify event's name and data.
	Name string          `json:"name,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
	// Capability, Method and Target are an audit event's: what the plugin
	// called and what the host's handler acted on.
	Capability string `json:"capability,omitempty"`
	Method     string `json:"method,omitempty"`
	Target     string `json:"target,omitempty"`
}

// eventLine converts a kernel event. A notify's data is redacted with r
// (nil: none), JSON-aware; every other string a plugin supplied was
// redacted by the kernel. The line never shares the event's data, which
// is the host's.
func eventLine(e observe.Event, r redact.Func) EventLine {
	l := EventLine{Time: e.Time, Type: string(e.Type), Generation: e.Generation, Hash: e.Hash, Plugin: e.Plugin, State: e.State,
		ElapsedMS: ms(e.Elapsed), Message: e.Message, Name: e.Name, Capability: e.Capability, Method: e.Method, Target: e.Target}
	if e.Err != nil {
		l.Error = e.Err.Error()
	}
	if len(e.Data) > 0 {
		data := e.Data
		if r != nil {
			data = r.JSON(data)
		}
		if len(data) > 0 && &data[0] == &e.Data[0] {
			data = append(json.RawMessage(nil), data...)
		}
		l.Data = data
	}
	return l
}

// size is what a line is counted for in the event ring and a follower.
func (l EventLine) size() int64 {
	return int64(lineOverhead + len(l.Type) + len(l.Hash) + len(l.Plugin) + len(l.State) + len(l.Message) + len(l.Error) +
		len(l.Name) + len(l.Data) + len(l.Capability) + len(l.Method) + len(l.Target))
}

// ms converts d to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Error codes of an Error answer (docs/admin.md), with their HTTP status.
const (
	CodeBadRequest       = "bad_request"        // 400: a parameter is missing or bad
	CodeInvalidJSON      = "invalid_json"       // 400: the body is not JSON, has unknown fields or trailing data
	CodeBodyTooLarge     = "body_too_large"     // 413: the body is over Options.MaxBody
	CodeRequestTimeout   = "request_timeout"    // 408: the body did not arrive within Options.BodyTimeout
	CodeNotFound         = "not_found"          // 404: no endpoint has the path
	CodeMethodNotAllowed = "method_not_allowed" // 405: the endpoint does not take the method
	CodeNotStarted       = "not_started"        // 503: the kernel has no generation yet
	CodeClosed           = "closed"             // 503: the kernel or the server is closing
	CodeUnknownPlugin    = "unknown_plugin"     // 404: restart of a name no running member has
	CodeUnknownTarget    = "unknown_target"     // 404: call of an ID no contribution has
	CodeInputRefused     = "input_refused"      // 422: the provider's schema refuses the input
	CodePluginError      = "plugin_error"       // 502: the plugin failed the call
	CodeReloadRolledBack = "reload_rolled_back" // 409: the reload failed and rolled back
	CodeRestartFailed    = "restart_failed"     // 502: the plugin did not start again
	CodeNoLogs           = "no_logs"            // 404: the server keeps no logs
	CodeNotSupported     = "not_supported"      // 501: the host does not offer it (stop without Options.OnStop)
	CodeTooSlow          = "too_slow"           // the last line of a stream whose client fell behind
	CodeInternal         = "internal"           // 500: anything else
)

// Error is an error answer: its JSON body is {"error": {...}}, its HTTP
// status Status. A stream that ends early ends with one such line.
type Error struct {
	// Status is the HTTP status code; it is not part of the JSON.
	Status int `json:"-"`
	// Code is one of the Code constants.
	Code    string `json:"code"`
	Message string `json:"message"`
	// Plugin names the plugin that failed (CodePluginError).
	Plugin string `json:"plugin,omitempty"`
	// PluginError is the error the plugin answered with, when it answered
	// one (CodePluginError).
	PluginError *protocol.Error `json:"plugin_error,omitempty"`
	// Generation is the generation that keeps serving (a rollback) or that
	// the target was looked up in.
	Generation uint64 `json:"generation,omitempty"`
	// Problems lists every problem of a rolled-back reload or a failed
	// restart.
	Problems []string `json:"problems,omitempty"`
}

// Error returns "admin: <code>: <message>".
func (e *Error) Error() string { return fmt.Sprintf("admin: %s: %s", e.Code, e.Message) }

// errorBody is the JSON envelope of an Error.
type errorBody struct {
	Error *Error `json:"error"`
}
