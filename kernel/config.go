package kernel

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/sidecar"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
)

// configFormat is the config file format version this build reads.
const configFormat = 1

// maxConfigSize is the largest config file LoadConfig reads, in bytes
// (docs/config.md).
const maxConfigSize = 1 << 20

// Defaults applied by Config.withDefaults, documented on Config's fields
// and in docs/config.md. The pool size and startup budget are
// sidecar.DefaultPoolSize and sidecar.DefaultBudget, the heartbeat and hang
// timeouts sidecar.DefaultHeartbeatInterval, DefaultHeartbeatTimeout and
// DefaultHangTimeout, the handshake timeout wire.DefaultHandshakeTimeout:
// each default has one owner, the package that applies it. None is
// exported: a host reads a default in the docs, and leaves the field zero
// to get it.
const (
	defaultDrainTimeout = 30 * time.Second
	// defaultInterceptDeadline bounds one interceptor call.
	defaultInterceptDeadline = 5 * time.Second
	// defaultCallDeadline bounds one strategy, provider or action call.
	defaultCallDeadline = 30 * time.Second
	// defaultMaxCallDepth bounds how deep plugins' calls nest.
	defaultMaxCallDepth = 8
)

// FailurePolicy overrides a package's required/optional default from its manifest.
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
	// Home is the directory holding packages/ and state.json. New makes a
	// relative Home absolute against the working directory at that time,
	// so the home, data and state paths the kernel uses and sends to
	// plugins are absolute.
	Home string
	// Host identifies the host program to plugins in initialize.
	Host protocol.HostInfo
	// Capabilities are provided by the host itself.
	Capabilities []capability.Provided
	// Handlers serve the calls plugins make to the capabilities the host
	// provides (docs/protocol.md §5.11), by capability key; Go only (the
	// config file cannot name a function). Each key must be one of
	// Capabilities, and each handler non-nil: New refuses others. A
	// plugin's call to a host capability without a handler is answered
	// -32006 (not available). New copies the map.
	Handlers map[capability.Key]capability.Handler
	// MaxCallDepth bounds how deep plugins' calls nest (config key
	// max_call_depth; default 8): a call made while serving a request of
	// depth MaxCallDepth is refused with -32007, its message showing the
	// chain of plugins. A host request to a plugin is depth 0; a call made
	// while serving a request of depth n is depth n+1, one without a
	// parent depth 1. Negative is an error at New.
	MaxCallDepth int
	// StreamWindow is the window of the streams StreamProvider asks for
	// (docs/protocol.md §5.12): how many chunks a provider may send beyond
	// the last one the host acknowledged, and so the most the host holds
	// per stream. Go only; zero or less means 16, more than 1024 is
	// capped.
	StreamWindow int
	// Points and Slots are the interception points and strategy slots the
	// host defines.
	Points []contribution.Point
	Slots  []contribution.Slot
	// Strict makes a contribution to an unknown point or slot an error
	// instead of a warning, and a dispatch to one (Intercept on a point or
	// Strategy on a slot not listed here) an error wrapping
	// ErrUnknownTarget. Without it, such a dispatch is no error and runs no
	// plugin, since contributions to undeclared targets are left out of
	// the registry: Intercept returns the payload unchanged with no steps,
	// and Strategy says the host default applies.
	Strict bool
	// Kinds are the contribution kinds the host accepts; nil means the four
	// built-in ones (contribution.DefaultKinds). A host adds its own kinds
	// by appending to contribution.DefaultKinds() (config key kinds, which
	// lists only the added ones). Plugins declare contributions of them in
	// their handshake (protocol 1.1) as their manifests' runtime.contributes
	// authorize; the host reads them from Current().Registry().OfKind and
	// invokes them with Invoke and InvokeEach.
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
	// DrainTimeout bounds how long a retired generation waits for in-flight
	// calls (default 30s).
	DrainTimeout time.Duration
	// Supervision configures heartbeats and restarts.
	Supervision Supervision
	// PluginEnv holds, per package, environment variables the host gives
	// its sidecar (config key plugin_env); secret values are redacted from
	// every log line and error message.
	PluginEnv map[string]map[string]EnvVar
	// Limits holds optional per-package resource limits (Linux only).
	Limits map[string]generation.Limits
	// PluginConfig is each package's effective configuration, sent to it in
	// initialize (config key plugin_config).
	PluginConfig map[string]json.RawMessage
	// Observer, when set, is told about every call the kernel sends to a
	// plugin and every plugin start (see Observer); nil costs nothing.
	// The call counters of PluginStatus.Calls are kept either way.
	Observer observe.Observer
	// Logger receives all kernel and plugin logs; nil means hclog's default.
	Logger hclog.Logger
	// HandshakeTimeout bounds the handshake of each plugin whose manifest
	// sets no runtime.handshake_timeout (config key handshake_timeout).
	// Zero means the protocol's default handshake timeout (10s); it may not
	// exceed 60s, the largest a manifest may set (docs/protocol.md §9).
	HandshakeTimeout time.Duration
	// Session is the session context sent to every plugin in initialize
	// (config key session), e.g. a workspace or a user; nil sends none.
	Session map[string]string
	// DataRoot is the directory holding each plugin's data directory,
	// <DataRoot>/<name>, which the plugin receives in EXTKERNEL_DATA_DIR and
	// initialize (config key data_root). Empty means <Home>/data. New makes
	// a relative DataRoot absolute against the working directory at that
	// time.
	DataRoot string
	// ValidateProviderInput makes CallProvider check its input against the
	// JSON Schema the provider declared, before the plugin is called
	// (config key validate_provider_input; default off): input the schema
	// refuses fails with an *InputError, and a provider whose schema does
	// not compile cannot be called. See docs/config.md.
	ValidateProviderInput bool
	// FirstGeneration is the number Start gives the first generation; each
	// published generation after it takes the next number. Zero means 1. A
	// host that records generations across runs (kernelctl run writes
	// <home>/state/snapshots/<n>.json) sets it past the last number it
	// recorded, so that no number is used twice.
	FirstGeneration uint64
}

// ConfigError lists every problem found in a config file, each with its key
// path, e.g. `kernel.json: policy.audit: "sometimes" is not "required" or
// "optional"`.
type ConfigError struct {
	Path     string
	Problems []string
}

// Error joins the problems, one per line, each prefixed with the file.
func (e *ConfigError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = e.Path + ": " + p
	}
	return strings.Join(lines, "\n")
}

// withDefaults returns c with every zero optional field set to its default.
func (c Config) withDefaults() Config {
	if c.PoolSize == 0 {
		c.PoolSize = sidecar.DefaultPoolSize
	}
	if c.StartupBudget == 0 {
		c.StartupBudget = sidecar.DefaultBudget
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = defaultDrainTimeout
	}
	for _, d := range []*time.Duration{&c.Deadlines.Strategy, &c.Deadlines.Provider, &c.Deadlines.Action} {
		if *d == 0 {
			*d = defaultCallDeadline
		}
	}
	if c.Deadlines.Intercept == 0 {
		c.Deadlines.Intercept = defaultInterceptDeadline
	}
	c.Supervision = c.Supervision.withDefaults()
	if c.Logger == nil {
		c.Logger = hclog.Default()
	}
	if c.FirstGeneration == 0 {
		c.FirstGeneration = 1
	}
	if c.MaxCallDepth == 0 {
		c.MaxCallDepth = defaultMaxCallDepth
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = wire.DefaultHandshakeTimeout
	}
	if c.DataRoot == "" {
		c.DataRoot = filepath.Join(c.Home, "data")
	}
	return c
}

// resolve makes c's Home and DataRoot absolute, checks its handshake
// timeout and copies its Session, which every client reads.
func (c Config) resolve() (Config, error) {
	home, err := filepath.Abs(c.Home)
	if err != nil {
		return c, fmt.Errorf("kernel: config: home %s: %w", c.Home, err)
	}
	c.Home = home
	c.Session = maps.Clone(c.Session)
	if c.HandshakeTimeout < 0 || c.HandshakeTimeout > wire.MaxHandshakeTimeout {
		return c, fmt.Errorf("kernel: config: handshake timeout %v is not between 0 and %v", c.HandshakeTimeout, wire.MaxHandshakeTimeout)
	}
	if c.MaxCallDepth < 0 {
		return c, fmt.Errorf("kernel: config: max call depth must be at least 1, got %d", c.MaxCallDepth)
	}
	c.Handlers = maps.Clone(c.Handlers)
	if err := c.checkHandlers(); err != nil {
		return c, err
	}
	if c.DataRoot != "" {
		root, err := filepath.Abs(c.DataRoot)
		if err != nil {
			return c, fmt.Errorf("kernel: config: data root %s: %w", c.DataRoot, err)
		}
		c.DataRoot = root
	}
	return c, nil
}

// checkHandlers refuses a handler for a capability the host does not
// provide, and a nil handler, naming every one.
func (c Config) checkHandlers() error {
	var problems []string
	for _, key := range slices.Sorted(maps.Keys(c.Handlers)) {
		switch {
		case c.Handlers[key] == nil:
			problems = append(problems, fmt.Sprintf("handler of capability %q is nil", key))
		case !slices.ContainsFunc(c.Capabilities, func(p capability.Provided) bool { return p.Key == key }):
			problems = append(problems, fmt.Sprintf("handler of capability %q, which the host does not provide (add it to Capabilities)", key))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("kernel: config: %s", strings.Join(problems, "; "))
	}
	return nil
}

// Restart defaults (VS Code's extension host: 3 crashes in 5 minutes). The
// heartbeat defaults are the sidecar's, which pings.
const (
	defaultCrashBudget = 3
	defaultCrashWindow = 5 * time.Minute
	defaultBackoffMin  = 200 * time.Millisecond
	defaultBackoffMax  = 30 * time.Second
)

func (s Supervision) withDefaults() Supervision {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&s.HeartbeatInterval, sidecar.DefaultHeartbeatInterval)
	def(&s.HeartbeatTimeout, sidecar.DefaultHeartbeatTimeout)
	def(&s.HangTimeout, sidecar.DefaultHangTimeout)
	def(&s.CrashWindow, defaultCrashWindow)
	def(&s.BackoffMin, defaultBackoffMin)
	def(&s.BackoffMax, defaultBackoffMax)
	if s.CrashBudget == 0 {
		s.CrashBudget = defaultCrashBudget
	}
	return s
}
