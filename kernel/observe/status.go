package observe

import (
	"time"

	"github.com/extkernel/extkernel/pluginpkg"
)

// PluginState is a plugin's supervision state.
type PluginState string

// Plugin states, as kernel.Kernel.Plugins reports them and
// EventPluginState announces.
const (
	// StateStarting: its sidecar is being started in a generation build.
	StateStarting PluginState = "starting"
	// StateReady: running and answering heartbeats.
	StateReady PluginState = "ready"
	// StateUnresponsive: running, but a heartbeat went unanswered; past the
	// hang timeout it is killed and restarted.
	StateUnresponsive PluginState = "unresponsive"
	// StateRestarting: it crashed and a restart is scheduled after backoff.
	StateRestarting PluginState = "restarting"
	// StateFailed: it is not running and will not be restarted automatically:
	// it failed to start (optional), or crashed more often than the crash
	// budget allows. Restarts of other plugins leave it failed.
	// kernel.Kernel.RestartPlugin retries it; a Reload retries one that failed
	// to start, but one past its crash budget only when its package changed.
	StateFailed PluginState = "failed"
	// StateStopped: the kernel stopped it because the kernel was closed
	// (kernel.Kernel.Close); nothing runs any more.
	StateStopped PluginState = "stopped"
	// StateDeclared: a lazy member published from its declarations with no
	// process: its first use starts it (after a crash within the crash
	// budget too: the next use starts it again).
	StateDeclared PluginState = "declared"
	// StateIdleStopped: a lazy member stopped after its idle timeout; its
	// next use starts it again.
	StateIdleStopped PluginState = "idle-stopped"
)

// PluginStatus is one plugin's supervision state.
//
// Its field names are those of the JSON the admin API shows for it
// (admin.PluginStatus: "name", "restarts").
type PluginStatus struct {
	// Name is the plugin's package name.
	Name  string
	State PluginState
	// Reason explains StateUnresponsive, StateRestarting and StateFailed.
	Reason string
	// Stderr holds the last stderr lines of a crashed plugin.
	Stderr []string
	// Restarts counts crashes within the current crash window: each was,
	// or will be, followed by a restart while the crash budget lasts.
	Restarts int
	// Since is when it entered State.
	Since time.Time
	// PID is the process ID of the plugin's sidecar in the current
	// generation, or zero when none is running there. The process is the
	// kernel's: call the plugin through the kernel's dispatch methods.
	PID int
	// Calls are the plugin's call counters (always on, cheap atomics).
	Calls CallStats
	// Confinement is how its process in the current generation is
	// confined and what this machine enforces of it
	// (sidecar.Client.Confinement: Mode "off" when it is not); nil when
	// none runs there. It is shared: MUST NOT be modified.
	Confinement *pluginpkg.ConfinementReport
	// Version is the plugin's version in the current generation, its
	// manifest's (a handshake answering another is one of the
	// generation's warnings); empty for a plugin that is no member.
	Version string
	// Activation is "eager" (started with its generation) or "lazy"
	// (started on first use); empty for a plugin that is no member of the
	// current generation.
	Activation string
	// Lazy is a lazy member's activity, nil for an eager one.
	Lazy *LazyStatus
	// Bake is the bake of its version (pluginpkg.Bake): in progress, or
	// how the last one ended; nil when none was watched since the kernel
	// started.
	Bake *BakeStatus
	// Protocol is the protocol version its process in the current
	// generation answered in initialize; empty when none runs there.
	Protocol string
	// Features are the optional protocol features that process uses
	// (docs/protocol.md §4.6), sorted: those it announced (protocol 1.4
	// or later), or, for an earlier answer, every feature of 1.3, which
	// the host takes it to use; nil when none runs there.
	Features []string
	// Usage counts, since the kernel started and across reloads and
	// restarts, the plugin's uses of optional protocol features the host
	// served and its handshakes by protocol minor, by usage key
	// (docs/admin.md, "Usage": "calls", "progress", "protocol/1.3", ...;
	// a fixed set); only keys used at least once, nil when none was.
	Usage map[string]uint64
}

// Bake states (BakeStatus.State and the State of EventBake).
const (
	// BakeWatching: the version under bake runs and is watched.
	BakeWatching = "baking"
	// BakePassed: it ran its bake out; it stays.
	BakePassed = "passed"
	// BakeRollingBack: it failed its bake; the kernel is returning to the
	// version it replaced.
	BakeRollingBack = "rolling-back"
	// BakeRolledBack: the kernel returned to the previous version, which
	// serves.
	BakeRolledBack = "rolled-back"
	// BakeRollbackFailed: returning failed (Reason says why); the failed
	// version stays installed, held down as past its crash budget or
	// serving with its errors.
	BakeRollbackFailed = "rollback-failed"
)

// BakeStatus is a bake the kernel watched (docs/operations.md, "Bake").
type BakeStatus struct {
	// State is one of BakeWatching, BakePassed, BakeRollingBack,
	// BakeRolledBack and BakeRollbackFailed.
	State string
	// Version and Digest are the version under bake; FromVersion and
	// FromDigest the version it replaced.
	Version, Digest, FromVersion, FromDigest string
	// Started is when the kernel first ran the version under bake; Until
	// when the bake passes if nothing fails it.
	Started, Until time.Time
	// MaxErrorRate and MinCalls are the error rate watched (zero: the
	// crash budget alone).
	MaxErrorRate float64
	MinCalls     int
	// Calls and Errors count the calls that ended during the bake, and
	// those of them that failed.
	Calls, Errors uint64
	// Reason says why the bake failed, for the states after it; Ended is
	// when it passed or failed (zero while it runs).
	Reason string
	Ended  time.Time
}

// LazyStatus is what a lazy member has done: VS Code's startup table with
// the "last used" its users ask for.
type LazyStatus struct {
	// Declarations says where its published contributions came from:
	// "manifest", "cache" (its last handshake under the same inputs), or
	// "handshake" (its build started it to learn them).
	Declarations string
	// ActivatedBy says what started it last ("first call to provider
	// plugin/x/echo by host"); empty until something did.
	ActivatedBy string
	// Activated is when that start began; StartDuration how long its spawn
	// and handshake took, SpawnDuration until its process ran and
	// HandshakeDuration from then until its initialize answer was checked
	// (both zero when the start failed); FirstCall the time from the
	// start's beginning to the end of the use that caused it (zero until
	// it ended).
	Activated         time.Time
	StartDuration     time.Duration
	SpawnDuration     time.Duration
	HandshakeDuration time.Duration
	FirstCall         time.Duration
	// LastUsed is when its last use ended (or it was published, if never).
	LastUsed time.Time
	// Activations counts its starts, IdleStops its idle stops, since its
	// slot was created (a reload that changes the package creates a new
	// one).
	Activations, IdleStops int
}

// CallStats are a plugin's call counters (PluginStatus.Calls): always on,
// counted for every call the kernel sends to it (the host's dispatch and
// the calls it relays from other plugins) since the kernel started,
// across reloads and restarts.
type CallStats struct {
	// Calls counts the calls that ended; Errors those of them that failed.
	Calls, Errors uint64
	// InFlight is the number of calls sent and not ended.
	InFlight int64
	// P50, P90 and P99 are latency percentiles over every call that
	// ended, as the upper bounds of the histogram buckets they fall in
	// (powers of two from 16µs up to about 9 minutes), so within a factor
	// of two above the true value. Zero when no call ended.
	P50, P90, P99 time.Duration
}
