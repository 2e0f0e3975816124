package sidecar

import (
	"cmp"
	"context"
	"encoding/json"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/internal/wire"
)

// Defaults the zero Options stand for, beyond those in package internal/wire.
const (
	// DefaultStderrLines is how many stderr lines a client keeps for error
	// messages.
	DefaultStderrLines = 20
	// DefaultHeartbeatInterval is the time between two heartbeat pings
	// (VS Code's extension host pings every 3 s).
	DefaultHeartbeatInterval = 3 * time.Second
	// DefaultHeartbeatTimeout is how long a heartbeat ping may go
	// unanswered before the plugin is reported Unresponsive (VS Code: 3 s).
	DefaultHeartbeatTimeout = 3 * time.Second
	// DefaultHangTimeout is how long a pinged plugin may answer nothing
	// before it is stopped as hung with ErrUnresponsive (VS Code: 10 s).
	DefaultHangTimeout = 10 * time.Second
	// DefaultLogBurst is how many log lines a plugin may have forwarded at
	// once before the rate limit applies.
	DefaultLogBurst = 100
	// DefaultLogRate is how many log lines per second a plugin may have
	// forwarded once its burst is spent.
	DefaultLogRate = 50
	// DefaultLogSummaryInterval is the shortest time between two
	// "N log lines suppressed" warnings of one plugin.
	DefaultLogSummaryInterval = 10 * time.Second
)

// Options configure a Client. The zero value is usable: every zero field
// means the documented default.
type Options struct {
	// Logger is the parent of each plugin's logger, which is
	// Logger.Named(plugin name). Nil discards logs.
	Logger hclog.Logger
	// HostName and HostVersion identify the host in initialize.
	HostName, HostVersion string
	// DataRoot is the directory under which each plugin gets its data
	// directory, DataRoot/<name>, created on start (mode 0700). Empty means
	// no data directory: EXTKERNEL_DATA_DIR and plugin.data_dir are empty.
	DataRoot string
	// Config is the plugin's effective configuration, sent in initialize.
	Config json.RawMessage
	// Env holds extra environment variables from the host (such as secrets
	// from its config), set over the manifest's env; the EXTKERNEL_*
	// variables still win. They are never logged.
	Env map[string]string
	// Session is the session context sent in initialize.
	Session map[string]string
	// HandshakeTimeout replaces wire.DefaultHandshakeTimeout for
	// plugins whose manifest sets no runtime.handshake_timeout. Either is
	// capped at wire.MaxHandshakeTimeout.
	HandshakeTimeout time.Duration
	// CallTimeout bounds a call whose context has no deadline; zero means
	// wire.DefaultCallTimeout.
	CallTimeout time.Duration
	// ShutdownGrace is how long Close lets the plugin answer shutdown and
	// exit after stdin closes before SIGTERM; zero means
	// wire.DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// KillGrace is how long Close waits after SIGTERM before SIGKILL; zero
	// means wire.DefaultKillGrace.
	KillGrace time.Duration
	// WriteStall bounds one write to the plugin's stdin; a plugin that
	// does not read for that long is stopped as wedged. Zero means
	// wire.DefaultWriteStall.
	WriteStall time.Duration
	// HeartbeatInterval is the time between heartbeat pings after the
	// handshake (a ping still in flight delays the next); zero means
	// DefaultHeartbeatInterval, negative disables heartbeats, and with
	// them Unresponsive reports and the hang timeout.
	HeartbeatInterval time.Duration
	// HeartbeatTimeout is how long a ping may go unanswered before the
	// plugin is reported Unresponsive; zero means DefaultHeartbeatTimeout.
	// An unresponsive plugin is still pinged, and reported Responsive
	// again when one is answered.
	HeartbeatTimeout time.Duration
	// HangTimeout is how long a pinged plugin may answer nothing (no
	// response to a ping or to any call; notifications do not count),
	// counted from its last response, before it is stopped as a crash
	// whose cause wraps ErrUnresponsive; zero means DefaultHangTimeout.
	// It should exceed HeartbeatTimeout; either way the plugin is
	// reported Unresponsive before it is stopped.
	HangTimeout time.Duration
	// Limits are resource limits applied to the plugin process right after
	// it starts (Linux only: elsewhere non-zero Limits fail Start). The
	// zero value changes nothing.
	Limits Limits
	// MaxFrame bounds one frame from the plugin; zero means
	// wire.DefaultMaxFrame.
	MaxFrame int
	// StderrLines is how many stderr lines are kept for errors; zero means
	// DefaultStderrLines.
	StderrLines int
	// LogBurst and LogRate rate-limit the log lines forwarded from one
	// plugin, its stderr lines and log notifications together (a token
	// bucket): up to LogBurst lines at once, then LogRate lines per
	// second. Lines over the limit are counted instead of logged, and the
	// count is logged as one warning, "N log lines suppressed", at most
	// once per LogSummaryInterval and when the plugin's output ends.
	// StderrTail keeps every line. Zero means DefaultLogBurst,
	// DefaultLogRate and DefaultLogSummaryInterval; a negative LogRate
	// disables the limit.
	LogBurst           int
	LogRate            float64
	LogSummaryInterval time.Duration
	// Redact, if set, scrubs secrets from every string the plugin supplies
	// before the client logs it, quotes it in an error or hands it to the
	// host as a diagnostic: each stderr line, redacted whole before it is
	// cut for the log (for an hclog JSON line, its decoded strings and
	// keys too) and kept for StderrTail, CrashError and StartError; the
	// message, field keys and string values of log notifications; error
	// answers (protocol.Error.Message and Data); the quote and cause of a
	// malformed stdout line; an invalid interceptor decision; the methods
	// and ids the client logs or quotes; and the answer to initialize,
	// before it is checked and kept as Declarations (a provider ref or
	// action ID that held secret text fails the handshake). It is not
	// applied to results, notify data and call payloads, which are the
	// host's, nor to Config (sent to the plugin, never logged). Nil means
	// no redaction. It is called from several goroutines at once and must
	// be safe for that.
	Redact func(string) string
	// OnCrash, if set, is called once, from a goroutine the client owns,
	// when a started plugin terminates other than through Close. It is not
	// called for a plugin whose Start failed (the StartError says why).
	OnCrash func(*CrashError)
	// OnHealth, if set, is called when a running plugin's health changes
	// (Responsive to Unresponsive or back; never with the state it already
	// had; only after the handshake), with the plugin's name and the
	// client's ID. Calls for one client come from one goroutine the client
	// owns, so they never overlap. OnHealth MUST return quickly and MUST
	// NOT call Close on the client (Close waits for that goroutine): hand a
	// restart to another goroutine.
	OnHealth func(plugin string, id uint64, h Health)
	// OnNotify, if set, receives the plugin's notify notifications in
	// order, with the plugin's name and the client's ID (as OnHealth), from
	// the client's read goroutine: it must return quickly, as no response
	// is read while it runs.
	OnNotify func(plugin string, id uint64, n wire.NotifyParams)
	// OnCall, if set, serves the plugin's capability/call requests
	// (protocol 1.1); nil answers them, like every other plugin request,
	// with -32601. Each call runs on a goroutine of its own, which the
	// client owns, at most MaxInboundCalls of one plugin at once (one more
	// is answered -32603 at once). Its ctx is cancelled when the plugin
	// sends $/cancel for it, when the plugin stops (a crash, a fault or
	// Close) and when its parent ends; with Call.Parent it derives from
	// the context of the host request the call names (its values, its
	// cancellation, and the deadline: the one of that context, or what is
	// left of the request's own timeout, which the derived context does
	// not apply again), otherwise it is bounded by CallTimeout. OnCall
	// MUST honour ctx. Its output is sent as the result's output (valid
	// JSON, or nil for none); a *protocol.Error (errors.As) is answered
	// with its code, message and data, a failure after ctx ended with
	// -32800, any other error with -32603 and its text; messages are
	// redacted.
	OnCall func(ctx context.Context, call Call) (json.RawMessage, error)
	// OnCallAsync, if set with OnCall, is offered each capability/call
	// that asks for no stream first, on the reading goroutine, with the
	// ctx OnCall would get: it returns false to leave the call to OnCall,
	// or true once it has arranged for done to be called exactly once
	// with what OnCall would have returned (from any goroutine, possibly
	// before it returns). It MUST NOT block: the kernel uses it to relay a
	// call to another plugin's provider with no goroutine in between
	// (Client.InvokeAsync), answering on the reader of that plugin.
	OnCallAsync func(ctx context.Context, call Call, done func(json.RawMessage, error)) bool

	// now replaces time.Now for the log rate limit, in tests.
	now func() time.Time
	// redacting is set by withDefaults when Redact was set.
	redacting bool
}

// withDefaults returns o with every zero field replaced by its default.
func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	o.HandshakeTimeout = cmp.Or(o.HandshakeTimeout, wire.DefaultHandshakeTimeout)
	o.CallTimeout = cmp.Or(o.CallTimeout, wire.DefaultCallTimeout)
	o.ShutdownGrace = cmp.Or(o.ShutdownGrace, wire.DefaultShutdownGrace)
	o.KillGrace = cmp.Or(o.KillGrace, wire.DefaultKillGrace)
	o.WriteStall = cmp.Or(o.WriteStall, wire.DefaultWriteStall)
	o.HeartbeatInterval = cmp.Or(o.HeartbeatInterval, DefaultHeartbeatInterval)
	o.HeartbeatTimeout = cmp.Or(o.HeartbeatTimeout, DefaultHeartbeatTimeout)
	o.HangTimeout = cmp.Or(o.HangTimeout, DefaultHangTimeout)
	o.redacting = o.Redact != nil
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	if o.MaxFrame <= 0 {
		o.MaxFrame = wire.DefaultMaxFrame
	}
	if o.LogBurst <= 0 {
		o.LogBurst = DefaultLogBurst
	}
	if o.LogRate == 0 {
		o.LogRate = DefaultLogRate
	}
	o.LogSummaryInterval = cmp.Or(o.LogSummaryInterval, DefaultLogSummaryInterval)
	if o.StderrLines <= 0 {
		o.StderrLines = DefaultStderrLines
	}
	return o
}
