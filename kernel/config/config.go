package config

import (
	"cmp"
	"encoding/json"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// configFormat is the config file format version this build reads.
const configFormat = 1

// MaxFileSize is the largest config file Load reads, in bytes: a larger
// one is refused without being read (docs/config.md).
const MaxFileSize = 1 << 20

// FailurePolicy overrides a package's required/optional default from its
// manifest.
type FailurePolicy string

const (
	// FailureDefault keeps the manifest's runtime.required.
	FailureDefault FailurePolicy = ""
	// FailureRequired makes a failure of the package fail the generation.
	FailureRequired FailurePolicy = "required"
	// FailureOptional turns a failure of the package into a warning.
	FailureOptional FailurePolicy = "optional"
)

// Deadlines bound each kind of dispatched call. Zero fields take the
// defaults: 5s for Intercept, 30s for the others (docs/config.md).
type Deadlines struct {
	Intercept time.Duration
	Strategy  time.Duration
	Provider  time.Duration
	Action    time.Duration
}

// Supervision configures heartbeats and automatic restarts. Zero fields
// take the defaults documented in docs/config.md.
type Supervision struct {
	// HeartbeatInterval is the time between pings (default 3s).
	HeartbeatInterval time.Duration
	// HeartbeatTimeout marks a plugin unresponsive when a ping goes
	// unanswered that long (default 3s).
	HeartbeatTimeout time.Duration
	// HangTimeout kills and restarts a plugin silent that long (default
	// 10s).
	HangTimeout time.Duration
	// CrashBudget is how many crashes within CrashWindow are restarted
	// (default 3); one more leaves the plugin failed until an explicit
	// reload.
	CrashBudget int
	// CrashWindow is the window crashes are counted in (default 5m).
	CrashWindow time.Duration
	// BackoffMin is the delay before the first restart, doubled for each
	// further crash in the window (default 200ms), up to BackoffMax
	// (default 30s).
	BackoffMin time.Duration
	BackoffMax time.Duration
}

// Config is everything a host tells the kernel. The zero value of each
// optional field means the documented default.
type Config struct {
	// Home is the directory holding packages/ and state.json. kernel.New makes
	// a relative Home absolute against the working directory at that time, so
	// the home, data and state paths the kernel uses and sends to plugins are
	// absolute.
	Home string
	// Host identifies the host program to plugins in initialize.
	Host protocol.HostInfo
	// Capabilities are provided by the host itself.
	Capabilities []capability.Provided
	// Handlers serve the calls plugins make to the capabilities the host
	// provides (docs/protocol.md §5.11), by capability key; Go only (the
	// config file cannot name a function). Each key must be one of
	// Capabilities, and each handler non-nil (Validate). A
	// plugin's call to a host capability without a handler is answered
	// -32006 (not available). kernel.New copies the map.
	Handlers map[capability.Key]capability.Handler
	// CapabilityConfig holds, per host capability, the settings of the
	// handler serving it (config key capability_config), for a host that
	// builds its Handlers from its config file: kernelctl builds those of
	// host.fs.read and host.net.fetch (package kernel/hostcap) from
	// theirs. The kernel itself does not read it. Each key must be one of
	// Capabilities, and each value valid JSON (Validate).
	CapabilityConfig map[capability.Key]json.RawMessage
	// MaxCallDepth bounds how deep plugins' calls nest (config key
	// max_call_depth; default 8): a call made while serving a request of
	// depth MaxCallDepth is refused with -32007, its message showing the
	// chain of plugins. A host request to a plugin is depth 0; a call made
	// while serving a request of depth n is depth n+1, one without a
	// parent depth 1. Negative is an error (Validate).
	MaxCallDepth int
	// StreamWindow is the window of the streams kernel.Kernel.StreamProvider
	// asks for (docs/protocol.md §5.12): how many chunks a provider may send
	// beyond the last one the host acknowledged, and so the most the host holds
	// per stream. Go only; zero or less means 16, more than 1024 is capped.
	StreamWindow int
	// Points and Slots are the interception points and strategy slots the
	// host defines.
	Points []contribution.Point
	Slots  []contribution.Slot
	// Strict makes a contribution to an unknown point or slot an error instead
	// of a warning, and a dispatch to one (kernel.Kernel.Intercept on a point
	// or kernel.Kernel.Strategy on a slot not listed here) an error wrapping
	// kernel.ErrUnknownTarget. Without it, such a dispatch is no error and runs
	// no plugin, since contributions to undeclared targets are left out of the
	// registry: kernel.Kernel.Intercept returns the payload unchanged with no
	// steps, and kernel.Kernel.Strategy says the host default applies.
	Strict bool
	// Kinds are the contribution kinds the host accepts; nil means the four
	// built-in ones (contribution.DefaultKinds). A host adds its own kinds by
	// appending to contribution.DefaultKinds() (config key kinds, which lists
	// only the added ones). Plugins declare contributions of them in their
	// handshake (protocol 1.1) as their manifests' runtime.contributes
	// authorize; the host reads them from
	// kernel.Kernel.Current().Registry().OfKind and invokes them with
	// kernel.Kernel.Invoke and InvokeEach.
	Kinds []contribution.KindSpec
	// PoolSize bounds how many sidecars start at once (default 4).
	PoolSize int
	// StartupBudget is the one deadline shared by a generation's whole
	// startup (default 30s).
	StartupBudget time.Duration
	// Policy overrides required/optional per package name.
	Policy map[string]FailurePolicy
	// SlotOwners names the package that owns a slot when several claim it.
	SlotOwners map[contribution.Slot]string
	Deadlines  Deadlines
	// MaxCallDuration bounds how long a call to a plugin may run when the
	// plugin's progress notifications extend its deadline (config key
	// max_call_duration; default 10m; docs/protocol.md §5.15): each
	// progress moves the call's deadline to the time of the progress plus
	// the call's own deadline (Deadlines), never past the call's start
	// plus MaxCallDuration, or plus its deadline when that is longer.
	// Negative is an error (Validate).
	MaxCallDuration time.Duration
	// DrainTimeout bounds how long a retired generation waits for in-flight
	// calls (default 30s).
	DrainTimeout time.Duration
	// Supervision configures heartbeats and restarts.
	Supervision Supervision
	// PluginEnv holds, per package, environment variables the host gives
	// its sidecar (config key plugin_env); secret values are redacted from
	// every log line and error message.
	PluginEnv map[string]map[string]EnvVar
	// DefaultLimits bound what every plugin may make the system and the
	// host spend (config key default_limits): open files and address
	// space (Linux only), the frames queued toward it, each stream's chunk
	// data, its log lines and its malformed messages; a zero field is the
	// default pluginpkg.ResourceLimits gives it.
	DefaultLimits pluginpkg.ResourceLimits
	// Limits holds, per package, limits over DefaultLimits (config key
	// limits): each non-zero field replaces DefaultLimits' (LimitsOf).
	Limits map[string]pluginpkg.ResourceLimits
	// Confinement confines plugins to their manifests' permissions, with
	// the host's grants and denies (config key confinement;
	// ConfinementOf); the zero value confines nothing.
	Confinement Confinement
	// Signatures are the policies artifacts are verified under before
	// kernelctl installs them, by reference prefix (config key
	// signatures; SignaturePolicyFor). The kernel itself installs
	// nothing and does not read them.
	Signatures []SignaturePolicy
	// Activation says when each plugin starts (eager or lazy, over its
	// manifest's runtime.activation) and when an idle lazy one stops
	// (config keys activation, idle_timeout and idle_timeouts;
	// ActivationOf, IdleTimeoutOf).
	Activation Activation
	// PluginConfig is each package's effective configuration, sent to it in
	// initialize (config key plugin_config).
	PluginConfig map[string]json.RawMessage
	// Observer, when set, is told about every call the kernel sends to a
	// plugin and every plugin start (see observe.Observer); nil costs nothing.
	// The call counters of observe.PluginStatus.Calls are kept either way.
	Observer observe.Observer
	// Logger receives all kernel and plugin logs; nil means hclog's default.
	// A host that logs with log/slog gives SlogLogger(its *slog.Logger);
	// SlogHandler turns an hclog.Logger into a slog.Handler the other way.
	Logger hclog.Logger
	// HandshakeTimeout bounds the handshake of each plugin whose manifest
	// sets no runtime.handshake_timeout (config key handshake_timeout).
	// Zero means the protocol's default handshake timeout (10s); it may be
	// neither negative nor above 60s, the largest a manifest may set
	// (docs/protocol.md §9; Validate).
	HandshakeTimeout time.Duration
	// Session is the session context sent to every plugin in initialize
	// (config key session), e.g. a workspace or a user; nil sends none.
	Session map[string]string
	// DataRoot is the directory holding each plugin's data directory,
	// <DataRoot>/<name>, which the plugin receives in EXTKERNEL_DATA_DIR and
	// initialize (config key data_root). Empty means <Home>/data. kernel.New
	// makes a relative DataRoot absolute against the working directory at that
	// time.
	DataRoot string
	// ValidateProviderInput makes kernel.Kernel.CallProvider check its input
	// against the JSON Schema the provider declared, before the plugin is
	// called (config key validate_provider_input; default off): input the
	// schema refuses fails with a *kernel.InputError, and a provider whose
	// schema does not compile cannot be called. The validator is linked in
	// by importing package kernel/inputschema for its effect; Validate
	// refuses the option in a program that does not. See docs/config.md.
	ValidateProviderInput bool
	// FirstGeneration is the number kernel.Kernel.Start gives the first
	// generation; each published generation after it takes the next number.
	// Zero means 1. A host that records generations across runs (kernelctl run
	// writes <home>/state/snapshots/<n>.json) sets it past the last number it
	// recorded, so that no number is used twice.
	FirstGeneration uint64
}

// Error lists every problem found in a config file (by Load and Parse) or
// in a Config (by Validate), each with its key path in the file, e.g.
// `kernel.json: policy.audit: "sometimes" is not "required" or
// "optional"`. A value breaks a rule in the same words wherever it comes
// from: Problems holds the same text for it in both cases.
type Error struct {
	// Path is the file; empty for a problem of a Config (Validate).
	Path string
	// Problems are the problems, each "key path: what is wrong".
	Problems []string
}

// Error joins the problems, one per line, each prefixed with the file
// when there is one.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p
		if e.Path != "" {
			lines[i] = e.Path + ": " + p
		}
	}
	return strings.Join(lines, "\n")
}

// EnvVar is one environment variable the host gives a plugin. A Secret
// value is passed to the plugin but never appears in logs, error messages,
// snapshots or fingerprints: wherever plugin text is logged or quoted, it is
// replaced by the text [REDACTED].
type EnvVar struct {
	Value  string
	Secret bool
}

// LimitsOf returns the limits of package name: DefaultLimits, each field
// replaced by the package's own entry in Limits where that one is not
// zero.
func (c *Config) LimitsOf(name string) pluginpkg.ResourceLimits {
	l, own := c.DefaultLimits, c.Limits[name]
	l.OpenFiles = cmp.Or(own.OpenFiles, l.OpenFiles)
	l.AddressSpace = cmp.Or(own.AddressSpace, l.AddressSpace)
	l.QueueBytes = cmp.Or(own.QueueBytes, l.QueueBytes)
	l.StreamWindowBytes = cmp.Or(own.StreamWindowBytes, l.StreamWindowBytes)
	l.LogLinesPerSecond = cmp.Or(own.LogLinesPerSecond, l.LogLinesPerSecond)
	l.MalformedMessages = cmp.Or(own.MalformedMessages, l.MalformedMessages)
	return l
}
