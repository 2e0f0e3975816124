package kernel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// ConfigFormat is the config file format version this build reads.
const ConfigFormat = 1

// MaxConfigSize is the largest config file LoadConfig reads, in bytes
// (docs/config.md).
const MaxConfigSize = 1 << 20

// Defaults applied by Config.withDefaults and documented in docs/config.md.
const (
	DefaultPoolSize      = 4
	DefaultStartupBudget = 30 * time.Second
	DefaultDrainTimeout  = 30 * time.Second
	// DefaultInterceptDeadline bounds one interceptor call.
	DefaultInterceptDeadline = 5 * time.Second
	// DefaultCallDeadline bounds one strategy, provider or action call.
	DefaultCallDeadline = 30 * time.Second
)

// Policy overrides a package's required/optional default from its manifest.
type Policy string

const (
	// PolicyDefault keeps the manifest's runtime.required.
	PolicyDefault Policy = ""
	// PolicyRequired makes a failure of the package fail the generation.
	PolicyRequired Policy = "required"
	// PolicyOptional turns a failure of the package into a warning.
	PolicyOptional Policy = "optional"
)

// HostInfo identifies the host program to plugins.
type HostInfo struct {
	Name    string
	Version string
}

// Deadlines bound each kind of dispatched call. Zero fields take the
// defaults documented in docs/config.md.
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
	Host HostInfo
	// Capabilities are provided by the host itself.
	Capabilities []capability.Provided
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
	// by appending to contribution.DefaultKinds(); it reads them from
	// Registry().OfKind.
	Kinds []contribution.KindSpec
	// PoolSize bounds how many sidecars start at once (default 4).
	PoolSize int
	// StartupBudget is the one deadline shared by a generation's whole
	// startup (default 30s).
	StartupBudget time.Duration
	// Policy overrides required/optional per package name.
	Policy map[string]Policy
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
	Limits map[string]sidecar.Limits
	// PluginConfig is each package's effective configuration, sent to it in
	// initialize (config key plugin_config).
	PluginConfig map[string]json.RawMessage
	// Logger receives all kernel and plugin logs; nil means hclog's default.
	Logger hclog.Logger
	// HandshakeTimeout bounds the handshake of each plugin whose manifest
	// sets no runtime.handshake_timeout (config key handshake_timeout).
	// Zero means protocol.DefaultHandshakeTimeout (10s); it may not exceed
	// protocol.MaxHandshakeTimeout (60s).
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

// fileConfig mirrors the JSON file; see docs/config.md.
type fileConfig struct {
	Format        *int                                  `json:"format"`
	Home          string                                `json:"home"`
	Host          *fileHost                             `json:"host"`
	Capabilities  []fileCapability                      `json:"capabilities"`
	Points        []string                              `json:"points"`
	Slots         []string                              `json:"slots"`
	Strict        bool                                  `json:"strict"`
	PoolSize      int                                   `json:"pool_size"`
	StartupBudget string                                `json:"startup_budget"`
	Policy        map[string]string                     `json:"policy"`
	SlotOwners    map[string]string                     `json:"slot_owners"`
	Deadlines     map[string]string                     `json:"deadlines"`
	DrainTimeout  string                                `json:"drain_timeout"`
	PluginConfig  map[string]json.RawMessage            `json:"plugin_config"`
	Supervision   map[string]json.RawMessage            `json:"supervision"`
	PluginEnv     map[string]map[string]json.RawMessage `json:"plugin_env"`
	Limits        map[string]map[string]json.RawMessage `json:"limits"`
	// Embedder settings.
	HandshakeTimeout      string                     `json:"handshake_timeout"`
	Session               map[string]json.RawMessage `json:"session"`
	DataRoot              string                     `json:"data_root"`
	ValidateProviderInput bool                       `json:"validate_provider_input"`
}

type fileHost struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type fileCapability struct {
	Capability string `json:"capability"`
	Version    string `json:"version"`
}

// LoadConfig reads a JSON config file. Relative paths in it (home) are
// resolved against the file's directory, and the home is returned absolute.
// Every problem is reported in one *ConfigError; unknown keys are errors
// naming the key. A file larger than MaxConfigSize, or one that is not a
// regular file, is refused without being read.
func LoadConfig(path string) (Config, error) {
	data, err := homefile.Read(path, MaxConfigSize)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return ParseConfig(path, data)
}

// ParseConfig parses config file contents; path is used for messages and to
// resolve a relative home, which is returned absolute.
func ParseConfig(path string, data []byte) (Config, error) {
	var problems []string
	problems = append(problems, unknownKeys(data)...)
	dec := json.NewDecoder(bytes.NewReader(data))
	var fc fileConfig
	if err := dec.Decode(&fc); err != nil {
		return Config{}, &ConfigError{Path: path, Problems: []string{jsonProblem(data, err)}}
	}
	if dec.More() {
		problems = append(problems, "unexpected data after the top-level object")
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	cfg, more := fc.convert(dir)
	problems = append(problems, more...)
	if len(problems) > 0 {
		return Config{}, &ConfigError{Path: path, Problems: problems}
	}
	return cfg, nil
}

var knownKeys = map[string]map[string]bool{
	"": {"format": true, "home": true, "host": true, "capabilities": true, "points": true, "slots": true, "strict": true, "pool_size": true, "startup_budget": true, "policy": true, "slot_owners": true, "deadlines": true, "drain_timeout": true, "plugin_config": true, "supervision": true,
		"plugin_env": true, "limits": true, "handshake_timeout": true, "session": true, "data_root": true,
		"validate_provider_input": true},
	"supervision": {"heartbeat_interval": true, "heartbeat_timeout": true, "hang_timeout": true, "crash_budget": true,
		"crash_window": true, "backoff_min": true, "backoff_max": true},
	"host":           {"name": true, "version": true},
	"capabilities[]": {"capability": true, "version": true},
	"deadlines":      {"intercept": true, "strategy": true, "provider": true, "action": true},
}

// unknownKeys reports every key the schema does not define, sorted by path.
func unknownKeys(data []byte) []string {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil // the typed decode reports the syntax error
	}
	var out []string
	check := func(prefix, schema string, obj map[string]json.RawMessage) {
		for k := range obj {
			if !knownKeys[schema][k] {
				out = append(out, fmt.Sprintf("%s%s: unknown key", prefix, k))
			}
		}
	}
	check("", "", top)
	for _, sub := range []string{"host", "deadlines", "supervision"} {
		var obj map[string]json.RawMessage
		if raw, ok := top[sub]; ok && json.Unmarshal(raw, &obj) == nil {
			check(sub+".", sub, obj)
		}
	}
	var caps []map[string]json.RawMessage
	if raw, ok := top["capabilities"]; ok && json.Unmarshal(raw, &caps) == nil {
		for i, c := range caps {
			check(fmt.Sprintf("capabilities[%d].", i), "capabilities[]", c)
		}
	}
	sort.Strings(out)
	return out
}

// jsonProblem turns a decoding error into a message with line and column.
func jsonProblem(data []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		l, c := lineCol(data, syn.Offset-1) // Offset is just past the bad byte
		return fmt.Sprintf("invalid JSON at line %d, column %d: %v", l, c, syn)
	case errors.As(err, &typ):
		l, c := lineCol(data, typ.Offset)
		return fmt.Sprintf("%s: must be %s, got %s (line %d, column %d)", typ.Field, typ.Type, typ.Value, l, c)
	}
	return fmt.Sprintf("invalid JSON: %v", err)
}

func lineCol(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	col = int(off) - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

func (fc *fileConfig) convert(dir string) (Config, []string) {
	var p []string
	add := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	cfg := Config{Strict: fc.Strict, PoolSize: fc.PoolSize, ValidateProviderInput: fc.ValidateProviderInput}
	switch {
	case fc.Format == nil:
		add("format: missing (this build reads format %d)", ConfigFormat)
	case *fc.Format != ConfigFormat:
		add("format: %d is not supported (this build reads format %d)", *fc.Format, ConfigFormat)
	}
	if fc.Home != "" {
		cfg.Home = fc.Home
		if !filepath.IsAbs(cfg.Home) {
			cfg.Home = filepath.Join(dir, cfg.Home)
		}
	}
	if fc.DataRoot != "" {
		cfg.DataRoot = fc.DataRoot
		if !filepath.IsAbs(cfg.DataRoot) {
			cfg.DataRoot = filepath.Join(dir, cfg.DataRoot)
		}
	}
	if cfg.HandshakeTimeout = duration(fc.HandshakeTimeout, "handshake_timeout", add); cfg.HandshakeTimeout > protocol.MaxHandshakeTimeout {
		add("handshake_timeout: %q exceeds the maximum of %v", fc.HandshakeTimeout, protocol.MaxHandshakeTimeout)
	}
	cfg.Session = convertSession(fc.Session, add)
	if fc.Host != nil {
		cfg.Host = HostInfo{Name: fc.Host.Name, Version: fc.Host.Version}
	}
	for i, c := range fc.Capabilities {
		key := capability.Key(c.Capability)
		if err := key.Validate(); err != nil {
			add("capabilities[%d].capability: %v", i, err)
		}
		v, err := semver.StrictNewVersion(c.Version)
		if err != nil {
			add("capabilities[%d].version: %q is not a valid semver version", i, c.Version)
			continue
		}
		cfg.Capabilities = append(cfg.Capabilities, capability.Provided{Key: key, Version: v})
	}
	for i, s := range fc.Points {
		if err := contribution.Point(s).Validate(); err != nil {
			add("points[%d]: %v", i, err)
		}
		cfg.Points = append(cfg.Points, contribution.Point(s))
	}
	for i, s := range fc.Slots {
		if err := contribution.Slot(s).Validate(); err != nil {
			add("slots[%d]: %v", i, err)
		}
		cfg.Slots = append(cfg.Slots, contribution.Slot(s))
	}
	if fc.PoolSize < 0 {
		add("pool_size: must be at least 1, got %d", fc.PoolSize)
	}
	cfg.StartupBudget = duration(fc.StartupBudget, "startup_budget", add)
	cfg.DrainTimeout = duration(fc.DrainTimeout, "drain_timeout", add)
	cfg.Deadlines = Deadlines{
		Intercept: duration(fc.Deadlines["intercept"], "deadlines.intercept", add),
		Strategy:  duration(fc.Deadlines["strategy"], "deadlines.strategy", add),
		Provider:  duration(fc.Deadlines["provider"], "deadlines.provider", add),
		Action:    duration(fc.Deadlines["action"], "deadlines.action", add),
	}
	cfg.Supervision = convertSupervision(fc.Supervision, add)
	cfg.PluginEnv = convertEnv(fc.PluginEnv, add)
	cfg.Limits = convertLimits(fc.Limits, add)
	cfg.Policy = convertPolicy(fc.Policy, add)
	cfg.PluginConfig = fc.PluginConfig
	cfg.SlotOwners = convertOwners(fc.SlotOwners, add)
	return cfg, p
}

func convertSession(in map[string]json.RawMessage, add func(string, ...any)) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for _, key := range sortedKeys(in) {
		var v string
		if err := json.Unmarshal(in[key], &v); err != nil {
			add("session.%s: must be a string, got %s", key, in[key])
			continue
		}
		out[key] = v
	}
	return out
}

func convertSupervision(in map[string]json.RawMessage, add func(string, ...any)) Supervision {
	str := func(key string) string {
		var v string
		if raw, ok := in[key]; ok && json.Unmarshal(raw, &v) != nil {
			add("supervision.%s: must be a duration string such as \"5s\"", key)
		}
		return v
	}
	d := func(key string) time.Duration { return duration(str(key), "supervision."+key, add) }
	s := Supervision{HeartbeatInterval: d("heartbeat_interval"), HeartbeatTimeout: d("heartbeat_timeout"),
		HangTimeout: d("hang_timeout"), CrashWindow: d("crash_window"), BackoffMin: d("backoff_min"), BackoffMax: d("backoff_max")}
	if raw, ok := in["crash_budget"]; ok {
		if err := json.Unmarshal(raw, &s.CrashBudget); err != nil || s.CrashBudget < 0 {
			add("supervision.crash_budget: must be a non-negative integer, got %s", raw)
		}
	}
	return s
}

func duration(s, field string, add func(string, ...any)) time.Duration {
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		add("%s: %q is not a positive duration such as \"5s\"", field, s)
		return 0
	}
	return d
}

func convertPolicy(in map[string]string, add func(string, ...any)) map[string]Policy {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]Policy, len(in))
	for _, name := range sortedKeys(in) {
		switch v := Policy(in[name]); v {
		case PolicyRequired, PolicyOptional:
			out[name] = v
		default:
			add("policy.%s: %q is not \"required\" or \"optional\"", name, in[name])
		}
	}
	return out
}

func convertOwners(in map[string]string, add func(string, ...any)) map[contribution.Slot]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[contribution.Slot]string, len(in))
	for _, slot := range sortedKeys(in) {
		if err := contribution.Slot(slot).Validate(); err != nil {
			add("slot_owners.%s: %v", slot, err)
			continue
		}
		if in[slot] == "" {
			add("slot_owners.%s: owner must name a package", slot)
			continue
		}
		out[contribution.Slot(slot)] = in[slot]
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// withDefaults returns c with every zero optional field set to its default.
func (c Config) withDefaults() Config {
	if c.PoolSize == 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.StartupBudget == 0 {
		c.StartupBudget = DefaultStartupBudget
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	for _, d := range []*time.Duration{&c.Deadlines.Strategy, &c.Deadlines.Provider, &c.Deadlines.Action} {
		if *d == 0 {
			*d = DefaultCallDeadline
		}
	}
	if c.Deadlines.Intercept == 0 {
		c.Deadlines.Intercept = DefaultInterceptDeadline
	}
	c.Supervision = c.Supervision.withDefaults()
	if c.Logger == nil {
		c.Logger = hclog.Default()
	}
	if c.FirstGeneration == 0 {
		c.FirstGeneration = 1
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = protocol.DefaultHandshakeTimeout
	}
	if c.DataRoot == "" {
		c.DataRoot = filepath.Join(c.Home, "data")
	}
	return c
}

// resolve checks the embedder settings of c, whose Home New has made
// absolute, makes its DataRoot absolute and copies its Session, which every
// client reads.
func (c Config) resolve() (Config, error) {
	c.Session = maps.Clone(c.Session)
	if c.HandshakeTimeout < 0 || c.HandshakeTimeout > protocol.MaxHandshakeTimeout {
		return c, fmt.Errorf("kernel: config: handshake timeout %v is not between 0 and %v", c.HandshakeTimeout, protocol.MaxHandshakeTimeout)
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

// Supervision defaults (VS Code's extension host: unresponsive after 3s,
// killed after 10s, 3 crashes in 5 minutes).
const (
	DefaultHeartbeatInterval = 3 * time.Second
	DefaultHeartbeatTimeout  = 3 * time.Second
	DefaultHangTimeout       = 10 * time.Second
	DefaultCrashBudget       = 3
	DefaultCrashWindow       = 5 * time.Minute
	DefaultBackoffMin        = 200 * time.Millisecond
	DefaultBackoffMax        = 30 * time.Second
)

func (s Supervision) withDefaults() Supervision {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&s.HeartbeatInterval, DefaultHeartbeatInterval)
	def(&s.HeartbeatTimeout, DefaultHeartbeatTimeout)
	def(&s.HangTimeout, DefaultHangTimeout)
	def(&s.CrashWindow, DefaultCrashWindow)
	def(&s.BackoffMin, DefaultBackoffMin)
	def(&s.BackoffMax, DefaultBackoffMax)
	if s.CrashBudget == 0 {
		s.CrashBudget = DefaultCrashBudget
	}
	return s
}
