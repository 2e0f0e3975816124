package builder

import (
	"time"

	"github.com/extkernel/extkernel/sidecar"
)

// Options are how a build starts its processes and whom it tells. What to
// build, as data, is the generation.Inputs.
type Options struct {
	// Client is what every member's sidecar starts with: the host's
	// identity, where plugin data lives, redaction, timeouts and the
	// callbacks that report crashes, health and notifications and serve
	// the plugins' calls. Each member's generation.Launch sets its Config,
	// Env and Limits over it, and the host's kinds (Inputs.Spec.Kinds) set
	// its Kinds.
	Client sidecar.Options
	// PoolSize bounds how many plugins start at once (zero means
	// DefaultPoolSize), and Budget the whole start, shared by every plugin
	// in it (zero means DefaultBudget).
	PoolSize int
	Budget   time.Duration
	// OnEvent receives start progress. Calls are serialized and must not
	// block. A member reported ready and then removed by the build (left
	// out for its declarations, or failed along requires) is reported
	// again, as failed with its reason.
	OnEvent func(Event)
	// Previous is the running set this build succeeds, whose clients
	// Adopt names; nil for a first generation.
	Previous *Running
	// Adopt names members of Previous whose client the new generation
	// reuses instead of starting one (the member is Adopted); for a lazy
	// member of Previous that is lazy again, its slot, started or not. A client
	// whose plugin has exited since is adopted as it is: the member stays
	// down, as it was. A name whose member in Previous has no client is
	// started as usual. A failed Build never stops adopted clients; a
	// successful one owns them from then on (Previous must Release them).
	Adopt []string
	// Cache is the declaration cache lazy members are published from
	// (and written after each successful handshake of one); zero caches
	// nothing.
	Cache DeclCache
	// LazyHooks tell the host about lazy members' starts and idle stops.
	LazyHooks LazyHooks
	// IdleTimeout returns the named lazy member's idle timeout (zero:
	// never stopped); nil stops none.
	IdleTimeout func(name string) time.Duration
}

// State is where a plugin is in a build's start.
type State string

// Start states reported in Events.
const (
	// Starting: the plugin is being started.
	Starting State = "starting"
	// Ready: it completed its handshake.
	Ready State = "ready"
	// Failed: it failed to start, or was removed by the build after it
	// started (Event.Err says why).
	Failed State = "failed"
)

// Event reports progress of one plugin in a build's start: starting, then
// ready or failed; or failed without starting (not launched).
type Event struct {
	Plugin string
	State  State
	// Elapsed is the time since the plugin was launched (zero for
	// starting and for failures before launch).
	Elapsed time.Duration
	// Err is the failure, for Failed.
	Err error
}
