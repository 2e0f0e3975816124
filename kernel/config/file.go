package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/internal/jsonfile"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// fileConfig is the schema of kernel.json (docs/config.md). Its json tags
// are the one list of the file's keys: jsonfile.Bind reports every other
// key as unknown, and every value of the wrong JSON type, before convert
// checks the values.
type fileConfig struct {
	Format                *int                             `json:"format"`
	Home                  string                           `json:"home"`
	Host                  *fileHost                        `json:"host"`
	Capabilities          []fileCapability                 `json:"capabilities"`
	Points                []string                         `json:"points"`
	Slots                 []string                         `json:"slots"`
	Kinds                 []fileKind                       `json:"kinds"`
	Strict                bool                             `json:"strict"`
	PoolSize              int                              `json:"pool_size"`
	StartupBudget         jsonfile.Duration                `json:"startup_budget"`
	Policy                map[string]string                `json:"policy"`
	SlotOwners            map[string]string                `json:"slot_owners"`
	Deadlines             fileDeadlines                    `json:"deadlines"`
	DrainTimeout          jsonfile.Duration                `json:"drain_timeout"`
	PluginConfig          map[string]json.RawMessage       `json:"plugin_config"`
	Supervision           fileSupervision                  `json:"supervision"`
	PluginEnv             map[string]map[string]fileEnvVar `json:"plugin_env"`
	Limits                map[string]fileLimits            `json:"limits"`
	HandshakeTimeout      jsonfile.Duration                `json:"handshake_timeout"`
	Session               map[string]json.RawMessage       `json:"session"`
	DataRoot              string                           `json:"data_root"`
	ValidateProviderInput bool                             `json:"validate_provider_input"`
	MaxCallDepth          int                              `json:"max_call_depth"`
}

type fileHost struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type fileCapability struct {
	Capability string `json:"capability"`
	Version    string `json:"version"`
}

type fileDeadlines struct {
	Intercept jsonfile.Duration `json:"intercept"`
	Strategy  jsonfile.Duration `json:"strategy"`
	Provider  jsonfile.Duration `json:"provider"`
	Action    jsonfile.Duration `json:"action"`
}

type fileSupervision struct {
	HeartbeatInterval jsonfile.Duration `json:"heartbeat_interval"`
	HeartbeatTimeout  jsonfile.Duration `json:"heartbeat_timeout"`
	HangTimeout       jsonfile.Duration `json:"hang_timeout"`
	CrashBudget       int               `json:"crash_budget"`
	CrashWindow       jsonfile.Duration `json:"crash_window"`
	BackoffMin        jsonfile.Duration `json:"backoff_min"`
	BackoffMax        jsonfile.Duration `json:"backoff_max"`
}

// fileEnvVar is one plugin_env variable: a string, or {"value": "...",
// "secret": true}.
type fileEnvVar struct {
	Value  string `json:"value"`
	Secret bool   `json:"secret"`
}

// SetString takes the short form of a variable, its value alone.
func (v *fileEnvVar) SetString(s string) { v.Value = s }

// JSONDescription names both forms, for type errors.
func (fileEnvVar) JSONDescription() string { return `a string or {"value": "...", "secret": true}` }

type fileLimits struct {
	OpenFiles    *int64 `json:"open_files"`
	AddressSpace *int64 `json:"address_space"`
}

// Load reads a JSON config file. Relative paths in it (home) are
// resolved against the file's directory, and the home is returned absolute.
// Every problem is reported in one *Error; unknown keys are errors
// naming the key. A file larger than 1 MiB, or one that is not a
// regular file, is refused without being read.
func Load(path string) (Config, error) {
	data, err := homefile.Read(path, MaxFileSize)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data)
}

// Parse parses config file contents; path is used for messages and to
// resolve a relative home, which is returned absolute. The problems are
// listed in this order: unknown keys (sorted by path); values of the wrong
// JSON type (with line and column) and durations that do not parse, in
// document order; then the checks of the values.
func Parse(path string, data []byte) (Config, error) {
	root, err := jsonfile.Parse(data, jsonfile.NewLines(data))
	var syn *jsonfile.SyntaxError
	switch {
	case errors.Is(err, jsonfile.ErrEmpty):
		return Config{}, &Error{Path: path, Problems: []string{"invalid JSON: the file is empty"}}
	case errors.As(err, &syn):
		return Config{}, &Error{Path: path, Problems: []string{syn.Error()}}
	case err != nil:
		return Config{}, &Error{Path: path, Problems: []string{err.Error()}}
	}
	var fc fileConfig
	bound := jsonfile.Bind(root, data, &fc)
	problems := problemStrings(bound.Unknown)
	problems = append(problems, problemStrings(bound.Problems)...)
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	cfg, more := fc.convert(dir)
	for _, p := range more {
		// A value of the wrong type is reported once, not again by the
		// check of the zero value left in its place.
		if at, _, _ := strings.Cut(p, ": "); !bound.WrongType(at) {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return Config{}, &Error{Path: path, Problems: problems}
	}
	return cfg, nil
}

func problemStrings(ps []jsonfile.Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// convert checks the values of a bound file and returns its Config. dir is
// the file's absolute directory, against which relative paths resolve.
func (fc *fileConfig) convert(dir string) (Config, []string) {
	var p []string
	add := func(format string, a ...any) { p = append(p, fmt.Sprintf(format, a...)) }
	cfg := Config{Strict: fc.Strict, PoolSize: fc.PoolSize, ValidateProviderInput: fc.ValidateProviderInput,
		PluginConfig: fc.PluginConfig, StartupBudget: time.Duration(fc.StartupBudget),
		DrainTimeout: time.Duration(fc.DrainTimeout), HandshakeTimeout: time.Duration(fc.HandshakeTimeout)}
	switch {
	case fc.Format == nil:
		add("format: missing (this build reads format %d)", configFormat)
	case *fc.Format != configFormat:
		add("format: %d is not supported (this build reads format %d)", *fc.Format, configFormat)
	}
	cfg.Home = absolute(fc.Home, dir)
	cfg.DataRoot = absolute(fc.DataRoot, dir)
	if cfg.HandshakeTimeout > wire.MaxHandshakeTimeout {
		add("handshake_timeout: %q exceeds the maximum of %v", fc.HandshakeTimeout, wire.MaxHandshakeTimeout)
	}
	cfg.Session = convertSession(fc.Session, add)
	if fc.Host != nil {
		cfg.Host = protocol.HostInfo{Name: fc.Host.Name, Version: fc.Host.Version}
	}
	cfg.Capabilities = convertCapabilities(fc.Capabilities, add)
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
	if fc.MaxCallDepth < 0 {
		add("max_call_depth: must be at least 1, got %d", fc.MaxCallDepth)
	}
	cfg.MaxCallDepth = max(fc.MaxCallDepth, 0)
	d := fc.Deadlines
	cfg.Deadlines = Deadlines{Intercept: time.Duration(d.Intercept), Strategy: time.Duration(d.Strategy),
		Provider: time.Duration(d.Provider), Action: time.Duration(d.Action)}
	cfg.Supervision = fc.Supervision.convert(add)
	cfg.PluginEnv = convertEnv(fc.PluginEnv, add)
	cfg.Limits = convertLimits(fc.Limits, add)
	cfg.Policy = convertPolicy(fc.Policy, add)
	cfg.SlotOwners = convertOwners(fc.SlotOwners, add)
	cfg.Kinds = convertKinds(fc.Kinds, add)
	return cfg, p
}

// absolute resolves a relative path against dir; "" stays "".
func absolute(path, dir string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

func convertCapabilities(in []fileCapability, add func(string, ...any)) []capability.Provided {
	var out []capability.Provided
	for i, c := range in {
		key := capability.Key(c.Capability)
		if err := key.Validate(); err != nil {
			add("capabilities[%d].capability: %v", i, err)
		}
		v, err := semver.StrictNewVersion(c.Version)
		if err != nil {
			add("capabilities[%d].version: %q is not a valid semver version", i, c.Version)
			continue
		}
		out = append(out, capability.Provided{Key: key, Version: v})
	}
	return out
}

func convertSession(in map[string]json.RawMessage, add func(string, ...any)) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for _, key := range slices.Sorted(maps.Keys(in)) {
		var v string
		if err := json.Unmarshal(in[key], &v); err != nil {
			add("session.%s: must be a string, got %s", key, in[key])
			continue
		}
		out[key] = v
	}
	return out
}

func (s fileSupervision) convert(add func(string, ...any)) Supervision {
	if s.CrashBudget < 0 {
		add("supervision.crash_budget: must be a non-negative integer, got %d", s.CrashBudget)
	}
	return Supervision{HeartbeatInterval: time.Duration(s.HeartbeatInterval), HeartbeatTimeout: time.Duration(s.HeartbeatTimeout),
		HangTimeout: time.Duration(s.HangTimeout), CrashBudget: max(s.CrashBudget, 0), CrashWindow: time.Duration(s.CrashWindow),
		BackoffMin: time.Duration(s.BackoffMin), BackoffMax: time.Duration(s.BackoffMax)}
}

func convertPolicy(in map[string]string, add func(string, ...any)) map[string]FailurePolicy {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]FailurePolicy, len(in))
	for _, name := range slices.Sorted(maps.Keys(in)) {
		switch v := FailurePolicy(in[name]); v {
		case FailureRequired, FailureOptional:
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
	for _, slot := range slices.Sorted(maps.Keys(in)) {
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

// convertEnv checks plugin_env: package names are valid, variable names
// are environment variable names outside the reserved EXTKERNEL_ prefix.
func convertEnv(in map[string]map[string]fileEnvVar, add func(string, ...any)) map[string]map[string]EnvVar {
	if len(in) == 0 {
		return nil
	}
	out := map[string]map[string]EnvVar{}
	for _, pkg := range slices.Sorted(maps.Keys(in)) {
		if err := pluginpkg.ValidateName(pkg); err != nil {
			add("plugin_env.%s: %v", pkg, err)
			continue
		}
		out[pkg] = map[string]EnvVar{}
		for _, name := range slices.Sorted(maps.Keys(in[pkg])) {
			if !validEnvName(name) || strings.HasPrefix(name, pluginpkg.ReservedEnvPrefix) {
				add("plugin_env.%s.%s: %q is not a usable environment variable name (letters, digits, '_'; not EXTKERNEL_*)", pkg, name, name)
				continue
			}
			out[pkg][name] = EnvVar(in[pkg][name])
		}
	}
	return out
}

func validEnvName(s string) bool {
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

// convertLimits checks limits: each one set is a positive integer.
func convertLimits(in map[string]fileLimits, add func(string, ...any)) map[string]generation.Limits {
	if len(in) == 0 {
		return nil
	}
	out := map[string]generation.Limits{}
	positive := func(field string, v *int64) uint64 {
		if v == nil {
			return 0
		}
		if *v <= 0 {
			add("%s: must be a positive integer, got %d", field, *v)
			return 0
		}
		return uint64(*v)
	}
	for _, pkg := range slices.Sorted(maps.Keys(in)) {
		out[pkg] = generation.Limits{
			AddressSpace: positive("limits."+pkg+".address_space", in[pkg].AddressSpace),
			OpenFiles:    positive("limits."+pkg+".open_files", in[pkg].OpenFiles),
		}
	}
	return out
}
