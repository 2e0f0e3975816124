package sidecar

import (
	"cmp"
	"context"
	"encoding/json"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// Bounds the zero Options stand for: a plugin's stderr lines kept for
// errors, the defaults of its log rate and of how far its malformed
// messages may outnumber its well-formed ones (pluginpkg.ResourceLimits),
// and how often the
// suppressed log lines are summed up.
const (
	defaultStderrLines        = 20
	defaultLogRate            = 50 // lines a second, in bursts of twice as many
	defaultLogSummaryInterval = 10 * time.Second
	defaultMaxMalformed       = 100
)

// Options configure a Client. The zero value is usable: every zero field
// means the documented default (the defaults are in docs/protocol.md, §9
// and §10).
type Options struct {
	// Logger is the parent of each plugin's logger, which is
	// Logger.Named(plugin name). Nil discards logs.
	Logger hclog.Logger
	// Host identifies the host in initialize.
	Host protocol.HostInfo
	// DataRoot is the directory under which each plugin gets its data
	// directory, DataRoot/<name>, created on start (mode 0700). Empty means
	// no data directory: EXTKERNEL_DATA_DIR and plugin.data_dir are empty.
	DataRoot string
	// Config is the plugin's effective configuration, sent in initialize.
	// The client never logs it.
	Config json.RawMessage
	// Env holds extra environment variables from the host (such as secrets
	// from its config), set over the manifest's env; the EXTKERNEL_*
	// variables still win. They are never logged.
	Env map[string]string
	// Session is the session context sent in initialize.
	Session map[string]string
	// Kinds lists the contribution kinds, beyond the four built-in ones,
	// that the host declares: the only kinds a handshake's contributions
	// may have (protocol 1.1). Nil means none.
	Kinds []contribution.Kind
	// HandshakeTimeout bounds the handshake of a plugin whose manifest
	// sets no runtime.handshake_timeout; zero means 10s. Either is capped
	// at 60s.
	HandshakeTimeout time.Duration
	// HeartbeatInterval is the time between heartbeat pings after the
	// handshake (a ping still in flight delays the next); zero means 3s,
	// negative disables heartbeats, and with them OnHealth reports and
	// the hang timeout.
	HeartbeatInterval time.Duration
	// HeartbeatTimeout is how long a ping may go unanswered before the
	// plugin is reported unresponsive (OnHealth); zero means 3s. An
	// unresponsive plugin is still pinged, and reported responsive again
	// when one is answered.
	HeartbeatTimeout time.Duration
	// HangTimeout is how long a pinged plugin may answer nothing (no
	// response to a ping or to any call; notifications do not count),
	// counted from its last response, before it is stopped as a crash
	// whose cause wraps ErrUnresponsive; zero means 10s. It should exceed
	// HeartbeatTimeout; either way the plugin is reported unresponsive
	// before it is stopped.
	HangTimeout time.Duration
	// MaxCallDuration bounds how long a call may run when the plugin's
	// $/progress notifications (protocol 1.3, docs/protocol.md §5.15)
	// extend it: each progress moves the call's own timeout (the call
	// timeout, or WithCallTimeout's) to the time of the progress plus
	// that timeout, never past the call's start plus MaxCallDuration (or
	// plus the timeout, when that is longer). A deadline of the call's
	// context is the caller's and is never extended. Zero means 10m
	// (wire.DefaultMaxCallDuration); negative disables the extension.
	MaxCallDuration time.Duration
	// Limits bound what the plugin may make the system and the host spend
	// (pluginpkg.ResourceLimits: each field's doc gives its default). The
	// process limits (OpenFiles, AddressSpace) are applied right after the
	// process starts (Linux only: elsewhere non-zero ones fail Start); the
	// others bound the frames queued toward the plugin, each stream's
	// chunk data, its log lines and its malformed messages.
	Limits pluginpkg.ResourceLimits
	// Confinement confines the plugin to its manifest's permissions, with
	// the host's grants and denies (docs/security.md, "Confinement"): off
	// when its Mode is "" or "off". ${workspace} is Session["workspace"];
	// ${tmp} a private directory Start creates (the plugin's TMPDIR) and
	// the client removes when the plugin stops. Under "require", Start
	// fails in phase "confine" when this machine cannot enforce every
	// rule; Client.Confinement says what is enforced. On Linux the plugin
	// is forked from a host thread confined with Landlock, seccomp and
	// no_new_privs (see internal/confine); elsewhere nothing is enforced.
	Confinement pluginpkg.Confinement
	// Redact, if set, scrubs secrets from every string the plugin supplies
	// before the client logs it, quotes it in an error or hands it to the
	// host as a diagnostic: each stderr line, redacted whole before it is
	// cut for the log (for an hclog JSON line, its decoded strings and
	// keys too) and kept for StderrTail, CrashError and StartError; the
	// message, field keys and string values of log notifications; error
	// answers (protocol.Error.Message and Data); the quote and cause of a
	// malformed stdout line; the methods and ids the client logs or
	// quotes; a notify's event name; and the answer to initialize, before it is checked and kept
	// as Declarations (a provider ref or action ID that held secret text
	// fails the handshake). It is not applied to results, notify data and
	// call payloads, which are the host's, nor to Config. Nil means no
	// redaction. It is called from several goroutines at once and must be
	// safe for that.
	Redact func(string) string
	// OnCrash, if set, is called once, from a goroutine the client owns,
	// when a started plugin terminates other than through Close. It is not
	// called for a plugin whose Start failed (the StartError says why). It
	// may call Close on c.
	OnCrash func(c *Client, err *CrashError)
	// OnHealth, if set, is called when a running plugin's health changes:
	// responsive is false when a heartbeat ping went unanswered for
	// HeartbeatTimeout, true again when a later one is answered (never
	// with the state it already had; only after the handshake; a client
	// starts responsive). Calls for one client come from one goroutine the
	// client owns, so they never overlap. OnHealth MUST return quickly and
	// MUST NOT call Close on c (Close waits for that goroutine): hand a
	// restart to another goroutine.
	OnHealth func(c *Client, responsive bool)
	// OnNotify, if set, receives the plugin's notify notifications in
	// order, from the client's read goroutine: it must return quickly, as
	// no response is read while it runs. event is the notification's event
	// name, passed through Redact (a name is a diagnostic string); data is
	// its data as sent (nil when absent), the host's, not redacted.
	OnNotify func(c *Client, event string, data json.RawMessage)
	// OnCall, if set, serves the plugin's capability/call requests
	// (protocol 1.1); nil answers them, like every other plugin request,
	// with -32601. Each call runs on a goroutine of its own, which the
	// client owns, at most 64 of one plugin at once (one more is answered
	// -32603 at once). Its ctx is cancelled when the plugin sends
	// $/cancel for it, when the plugin stops (a crash, a fault or Close)
	// and when its parent ends; with Call.Parent it derives from the
	// context of the host request the call names (its values, its
	// cancellation, and the deadline: the one of that context, or what is
	// left of the request's own timeout, which the derived context does
	// not apply again), otherwise it is bounded by the call timeout (30s).
	// OnCall MUST honour ctx. Its output is sent as the result's output
	// (valid JSON, or nil for none); a *protocol.Error (errors.As) is
	// answered with its code, message and data, a failure after ctx ended
	// with -32800, any other error with -32603 and its text; messages are
	// redacted.
	OnCall func(ctx context.Context, call Call) (json.RawMessage, error)
	// OnCallAsync, if set with OnCall, is offered each capability/call
	// that asks for no stream first, on the reading goroutine, with the
	// ctx OnCall would get, in the way a JSON-RPC handler answers later
	// (golang.org/x/tools' jsonrpc2 ErrAsync): it returns false to leave
	// the call to OnCall, or true once it has arranged for done to be
	// called exactly once with what OnCall would have returned (from any
	// goroutine, possibly before it returns). It MUST NOT block. The
	// kernel relays a plugin's call to another plugin's provider this way
	// (with Client.InvokeAsync), with no goroutine in between.
	OnCallAsync func(ctx context.Context, call Call, done func(json.RawMessage, error)) bool
	// OnUse, if set, is told of each use the plugin makes of an optional
	// protocol feature that the host served (docs/protocol.md §4.6), and
	// of the protocol version of its handshake: use is one of
	// wire.UsageKeys, a fixed set, never a string of the plugin's. A use
	// is a capability/call admitted ("calls", and "streams" when it asks
	// for a stream, "trace" when it carries a traceparent), its $/cancel
	// of one in flight ("cancel"), a well-formed $/progress ("progress"),
	// a stream OpenStream asked of it ("streams"), a contribution/invoke
	// sent to it or a handshake declaring contributions
	// ("contributions"); after each handshake, "protocol/1.<minor>" of
	// the version it answered. It is called from the goroutine that reads
	// the plugin's output or makes the call, with no lock held: it MUST
	// return quickly and MUST NOT call Close on c.
	OnUse func(c *Client, use string)

	// The bounds below have their defaults in every use but this
	// package's tests, which shorten them.

	// callTimeout bounds a call whose context has no deadline
	// (wire.DefaultCallTimeout).
	callTimeout time.Duration
	// shutdownGrace is how long Close lets the plugin answer shutdown and
	// exit after stdin closes before SIGTERM (wire.DefaultShutdownGrace);
	// killGrace how long Close waits after SIGTERM before SIGKILL
	// (wire.DefaultKillGrace).
	shutdownGrace, killGrace time.Duration
	// writeStall bounds one write to the plugin's stdin; a plugin that
	// does not read for that long is stopped as wedged
	// (wire.DefaultWriteStall).
	writeStall time.Duration
	// maxFrame bounds one frame from the plugin (wire.DefaultMaxFrame).
	maxFrame int
	// stderrLines is how many stderr lines are kept for errors.
	stderrLines int
	// logBurst and logRate rate-limit the log lines forwarded from one
	// plugin, its stderr lines and log notifications together (a token
	// bucket): up to logBurst lines at once, then logRate lines per
	// second. Lines over the limit are counted instead of logged, and the
	// count is logged as one warning, "N log lines suppressed", at most
	// once per logSummaryInterval and when the plugin's output ends.
	// StderrTail keeps every line. A negative logRate disables the limit.
	logBurst           int
	logRate            float64
	logSummaryInterval time.Duration
	// queueBytes, windowBytes and maxMalformed are Limits' QueueBytes,
	// StreamWindowBytes and MalformedMessages, defaults applied.
	queueBytes, windowBytes int64
	maxMalformed            int
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
	o.callTimeout = cmp.Or(o.callTimeout, wire.DefaultCallTimeout)
	o.shutdownGrace = cmp.Or(o.shutdownGrace, wire.DefaultShutdownGrace)
	o.killGrace = cmp.Or(o.killGrace, wire.DefaultKillGrace)
	o.writeStall = cmp.Or(o.writeStall, wire.DefaultWriteStall)
	o.HeartbeatInterval = cmp.Or(o.HeartbeatInterval, wire.DefaultHeartbeatInterval)
	o.HeartbeatTimeout = cmp.Or(o.HeartbeatTimeout, wire.DefaultHeartbeatTimeout)
	o.HangTimeout = cmp.Or(o.HangTimeout, wire.DefaultHangTimeout)
	o.MaxCallDuration = cmp.Or(o.MaxCallDuration, wire.DefaultMaxCallDuration)
	o.queueBytes = int64(cmp.Or(o.Limits.QueueBytes, wire.DefaultQueueBytes))
	o.windowBytes = int64(cmp.Or(o.Limits.StreamWindowBytes, wire.DefaultStreamWindowBytes))
	o.maxMalformed = int(cmp.Or(o.Limits.MalformedMessages, defaultMaxMalformed))
	o.redacting = o.Redact != nil
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	if o.maxFrame <= 0 {
		o.maxFrame = wire.DefaultMaxFrame
	}
	if o.logRate == 0 {
		o.logRate = float64(cmp.Or(o.Limits.LogLinesPerSecond, defaultLogRate))
	}
	if o.logBurst <= 0 {
		o.logBurst = max(int(2*o.logRate), 1)
	}
	o.logSummaryInterval = cmp.Or(o.logSummaryInterval, defaultLogSummaryInterval)
	if o.stderrLines <= 0 {
		o.stderrLines = defaultStderrLines
	}
	return o
}
