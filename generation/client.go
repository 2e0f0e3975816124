package generation

import (
	"encoding/json"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/internal/clients"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/sidecar"
)

// ClientOptions are what every sidecar of a build starts with, whatever its
// package: the host's identity, where plugin data lives, redaction and
// timeouts. A zero field means the documented default. What differs from
// one package to the next is its Launch value.
type ClientOptions struct {
	// Logger is the parent of each plugin's logger, which is
	// Logger.Named(plugin name); nil discards logs.
	Logger hclog.Logger
	// HostName and HostVersion identify the host in initialize.
	HostName, HostVersion string
	// DataRoot is the directory under which each plugin gets its data
	// directory, DataRoot/<name>, created on start (mode 0700). Empty
	// means no data directory: EXTKERNEL_DATA_DIR and plugin.data_dir are
	// empty.
	DataRoot string
	// Session is the session context sent in initialize.
	Session map[string]string
	// Redact, if set, scrubs secrets from every string a plugin supplies
	// before its client logs it, quotes it in an error or keeps it as a
	// diagnostic (stderr lines, log notifications, error answers, the
	// answer to initialize); results, notify data and payloads are the
	// host's and pass as they are. It is called from several goroutines at
	// once. Nil means no redaction.
	Redact func(string) string
	// HandshakeTimeout replaces protocol.DefaultHandshakeTimeout for
	// plugins whose manifest sets no runtime.handshake_timeout; either is
	// capped at protocol.MaxHandshakeTimeout.
	HandshakeTimeout time.Duration
	// HeartbeatInterval is the time between heartbeat pings of a running
	// plugin (3s when zero; negative disables heartbeats, and with them
	// health reports and the hang timeout). HeartbeatTimeout is how long a
	// ping may go unanswered before the plugin is reported unresponsive
	// (3s when zero). HangTimeout is how long a pinged plugin may answer
	// nothing before it is stopped, a crash (10s when zero).
	HeartbeatInterval, HeartbeatTimeout, HangTimeout time.Duration
	// callServer carries what serves the plugins' capability/call
	// requests (protocol 1.1): set by package kernel only (package
	// clients), so that every call is routed under its leases. Unset, a
	// plugin's call is answered "method not found".
	callServer
}

// callServer is embedded under this name so that no exported field or
// method of ClientOptions names it.
type callServer = clients.Server

// Observer receives what happens to a build's plugins. Its functions report;
// none of them decides anything. Every field may be nil.
type Observer struct {
	// OnEvent receives start progress. Calls are serialized and must not
	// block. A member reported ready and then removed by the build (left
	// out for its declarations, or failed along requires) is reported
	// again, as failed with its reason.
	OnEvent func(StartEvent)
	// OnCrash is called once, from a goroutine of the plugin's client,
	// when a started plugin terminates other than by being stopped: the
	// plugin's name, the ID of the client whose process ended (each start
	// of a plugin has its own; a report about a replaced one is stale),
	// the crash, whose message names the plugin, the exit status, the
	// cause and the last stderr lines, and those stderr lines.
	OnCrash func(plugin string, client uint64, err error, stderr []string)
	// OnHealth is called when a running plugin's heartbeat state changes:
	// responsive is false when a ping went unanswered for the heartbeat
	// timeout, true again when one is answered. Calls for one client never
	// overlap; OnHealth must return quickly.
	OnHealth func(plugin string, client uint64, responsive bool)
	// OnNotify receives a plugin's notify notifications in order, from
	// the reading goroutine of its client: it must return quickly. event
	// is the notification's event name and data its data as sent (nil
	// when absent).
	OnNotify func(plugin string, client uint64, event string, data json.RawMessage)
}

// StartState is where a plugin is in a build's start.
type StartState string

// Start states reported in StartEvents.
const (
	// StartLaunching: the plugin is being started.
	StartLaunching StartState = "starting"
	// StartReady: it completed its handshake.
	StartReady StartState = "ready"
	// StartFailed: it failed to start, or was removed by the build after
	// it started (its Err says why).
	StartFailed StartState = "failed"
)

// StartEvent reports progress of one plugin in a build's start: starting,
// then ready or failed; or failed without starting (not launched).
type StartEvent struct {
	Plugin string
	State  StartState
	// Elapsed is the time since the plugin was launched (zero for
	// starting and for failures before launch).
	Elapsed time.Duration
	// Err is the failure, for StartFailed.
	Err error
}

// sidecarOptions returns the options every client of the build starts
// with: in.Client and in.Observer in the sidecar's terms. Build computes it
// once; memberOptions adds each member's launch value.
func (in *Inputs) sidecarOptions() sidecar.Options {
	c, obs := in.Client, in.Observer
	o := sidecar.Options{Logger: c.Logger, HostName: c.HostName, HostVersion: c.HostVersion, DataRoot: c.DataRoot,
		Session: c.Session, Redact: c.Redact, HandshakeTimeout: c.HandshakeTimeout,
		HeartbeatInterval: c.HeartbeatInterval, HeartbeatTimeout: c.HeartbeatTimeout, HangTimeout: c.HangTimeout,
		OnNotify: notifyFunc(obs.OnNotify)}
	o.OnCall, o.OnCallAsync = clients.OnCallOf(&c)
	if f := obs.OnCrash; f != nil {
		o.OnCrash = func(ce *sidecar.CrashError) { f(ce.Plugin, ce.ClientID, ce, ce.Stderr) }
	}
	if f := obs.OnHealth; f != nil {
		o.OnHealth = func(plugin string, id uint64, h sidecar.Health) { f(plugin, id, h == sidecar.Responsive) }
	}
	return o
}

// notifyFunc adapts an Observer's OnNotify to the sidecar's, nil to nil.
func notifyFunc(fn func(plugin string, client uint64, event string, data json.RawMessage)) func(string, uint64, wire.NotifyParams) {
	if fn == nil {
		return nil
	}
	return func(plugin string, client uint64, n wire.NotifyParams) { fn(plugin, client, n.Event, n.Data) }
}
