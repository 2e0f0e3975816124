package observe

import (
	"encoding/json"
	"time"
)

// EventType says what an Event reports.
type EventType string

// Event types.
const (
	// EventPlugin reports the outcome of a plugin's start, the progress of
	// a build (or a lazy member's activation): State is ready or failed,
	// Elapsed how long the start took. That it starts is the
	// EventPluginState "starting"; the state the start leaves it in is
	// announced as an EventPluginState when its generation is published:
	// each state change is one event.
	EventPlugin EventType = "plugin"
	// EventGenerationPublished reports a new current generation.
	EventGenerationPublished EventType = "generation-published"
	// EventBuildFailed reports a generation build that failed; Err is the
	// *generation.BuildError. The current generation is unchanged.
	EventBuildFailed EventType = "build-failed"
	// EventPluginCrashed reports a plugin that terminated outside
	// kernel.Kernel.Close; Err is the crash: its message names the plugin, the
	// exit status or cause, and the last stderr lines.
	EventPluginCrashed EventType = "plugin-crashed"
	// EventWarning reports one warning of a published generation.
	EventWarning EventType = "warning"
	// EventPluginState reports a supervision state change: State is one of
	// the PluginState constants, Message the reason.
	EventPluginState EventType = "plugin-state"
	// EventNotify carries a plugin's notify notification (protocol.md
	// §5.10): Name is its event name, Data its data. It is delivered from
	// the goroutine that reads that plugin's output, so no answer from
	// that plugin is read while subscribers run: a subscriber must not
	// wait for a call to the same plugin. Generation is the number of the
	// current generation when the notifying process is the plugin's
	// process in it, and zero otherwise: a process still being started by
	// a build not yet published, or a replaced one that is finishing its
	// calls in a retired generation. Such notifies are delivered, but
	// never attributed to the current generation.
	EventNotify EventType = "notify"
	// EventAudit reports one action a host capability handler took for a
	// plugin's call, as the handler recorded it with Audit: Plugin is the
	// caller, Capability and Method what it called, Target what the call
	// acted on (a path, a URL), State the outcome (AuditAllowed,
	// AuditDenied or AuditFailed), Message what was done or why not, and
	// Err the refusal or the failure. The handlers of package
	// kernel/hostcap record one for every call. It is delivered from the
	// goroutine running the handler.
	EventAudit EventType = "audit"
	// EventBake reports a step of a bake (pluginpkg.Bake,
	// docs/operations.md, "Bake"): State is BakeWatching when the kernel
	// starts watching the version under bake, BakePassed, BakeRollingBack
	// (Message says why the bake failed), BakeRolledBack (the previous
	// version serves, Elapsed since the failure) or BakeRollbackFailed
	// (Err says why).
	EventBake EventType = "bake"
)

// Event is something a host may want to show or log.
type Event struct {
	Type EventType
	// Time is when the kernel emitted the event (for EventNotify, when the
	// notification was read).
	Time       time.Time
	Generation uint64
	// Hash is the generation's identity, generation.Generation.Hash (the
	// hex sha256 of its inputs, the same on every host with the same
	// inputs: docs/snapshot.md, "Generation hash"), for an event about a
	// published generation: EventGenerationPublished and its
	// EventWarning events; empty for the others.
	Hash   string
	Plugin string
	// State is the plugin's start state (a generation.StartState), for
	// EventPlugin, its supervision state (a PluginState), for
	// EventPluginState, or the outcome of an audited action (AuditAllowed,
	// AuditDenied, AuditFailed), for EventAudit.
	State   string
	Elapsed time.Duration
	Message string
	Err     error
	// Name is the event name the plugin sent, for EventNotify, redacted
	// (it is a diagnostic string).
	Name string
	// Data is the data the plugin sent, for EventNotify (nil when it sent
	// none). It is the plugin's JSON as received, the host's to use: it is
	// not redacted, unlike the text the kernel logs. A host that shows it
	// (a log, an event stream) redacts it there, as the admin server does.
	Data json.RawMessage
	// Capability and Method are, for EventAudit, the capability and the
	// method the plugin called; Target is what the call acted on, as the
	// handler recorded it (a path, a URL), redacted.
	Capability string
	Method     string
	Target     string
}
