package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/internal/jsonfile"
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
	CapabilityConfig      map[string]json.RawMessage       `json:"capability_config"`
	Points                []string                         `json:"points"`
	Slots                 []string                         `json:"slots"`
	Kinds                 []fileKind                       `json:"kinds"`
	Strict                bool                             `json:"strict"`
	PoolSize              int                              `json:"pool_size"`
	StartupBudget         jsonfile.Duration                `json:"startup_budget"`
	Policy                map[string]string                `json:"policy"`
	SlotOwners            map[string]string                `json:"slot_owners"`
	Deadlines             fileDeadlines                    `json:"deadlines"`
	MaxCallDuration       jsonfile.Duration                `json:"max_call_duration"`
	DrainTimeout          jsonfile.Duration                `json:"drain_timeout"`
	PluginConfig          map[string]json.RawMessage       `json:"plugin_config"`
	Supervision           fileSupervision                  `json:"supervision"`
	PluginEnv             map[string]map[string]fileEnvVar `json:"plugin_env"`
	DefaultLimits         *fileLimits                      `json:"default_limits"`
	Limits                map[string]fileLimits            `json:"limits"`
	Confinement           *fileConfinement                 `json:"confinement"`
	Activation            *fileActivation                  `json:"activation"`
	IdleTimeout           jsonfile.Duration                `json:"idle_timeout"`
	IdleTimeouts          map[string]jsonfile.Duration     `json:"idle_timeouts"`
	HandshakeTimeout      jsonfile.Duration                `json:"handshake_timeout"`
	Session               map[string]json.RawMessage       `json:"session"`
	DataRoot              string                           `json:"data_root"`
	ValidateProviderInput bool                             `json:"validate_provider_input"`
	MaxCallDepth          int                              `json:"max_call_depth"`
	Signatures            []fileSignature                  `json:"signatures"`
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
	OpenFiles         *int64 `json:"open_files"`
	AddressSpace      *int64 `json:"address_space"`
	QueueBytes        *int64 `json:"queue_bytes"`
	StreamWindowBytes *int64 `json:"stream_window_bytes"`
	LogLinesPerSecond *int64 `json:"log_lines_per_second"`
	MalformedMessages *int64 `json:"malformed_messages"`
}

type fileConfinement struct {
	Default  string                     `json:"default"`
	Packages map[string]string          `json:"packages"`
	Grants   map[string]filePermissions `json:"grants"`
	Denies   map[string]filePermissions `json:"denies"`
}

// filePermissions is the manifest's permissions grammar.
type filePermissions struct {
	FS *struct {
		Read  []string `json:"read"`
		Write []string `json:"write"`
	} `json:"fs"`
	Net *struct {
		Connect []string `json:"connect"`
	} `json:"net"`
	Exec []string `json:"exec"`
}

// convert returns the permissions; Validate checks their entries.
func (f filePermissions) convert() *pluginpkg.Permissions {
	p := &pluginpkg.Permissions{Exec: f.Exec}
	if f.FS != nil {
		p.Read, p.Write = f.FS.Read, f.FS.Write
	}
	if f.Net != nil {
		p.Connect = f.Net.Connect
	}
	return p
}

type fileActivation struct {
	Default  string            `json:"default"`
	Packages map[string]string `json:"packages"`
}

// convertActivation returns the activation; Validate checks it.
func convertActivation(fc *fileConfig) Activation {
	a := Activation{IdleTimeout: time.Duration(fc.IdleTimeout),
		IdleTimeouts: convertMap[string](fc.IdleTimeouts, func(d jsonfile.Duration) time.Duration { return time.Duration(d) })}
	if fc.Activation != nil {
		a.Default, a.Packages = fc.Activation.Default, fc.Activation.Packages
	}
	return a
}

// convert returns the confinement; Validate checks it.
func (f *fileConfinement) convert() Confinement {
	if f == nil {
		return Confinement{}
	}
	return Confinement{Default: f.Default, Packages: f.Packages,
		Grants: convertMap[string](f.Grants, filePermissions.convert),
		Denies: convertMap[string](f.Denies, filePermissions.convert)}
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
// resolve a relative home, which is returned absolute. The values are
// checked by Validate's rules and by those only a file can break. The
// problems are listed in this order: unknown keys (sorted by path); values
// of the wrong JSON type (with line and column) and durations that do not
// parse, in document order; then the problems of the values, in the
// order of the schema's keys, Validate's merged with the file's own (a
// missing format, a version that is not semver, a session value that is
// not a string, a kind's policy or target that names no value, a limit
// that is not positive).
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
	cfg, converted := fc.convert(dir)
	problems = append(problems, problemStrings(valueProblems(bound, converted, cfg.problems()))...)
	if len(problems) > 0 {
		return Config{}, &Error{Path: path, Problems: problems}
	}
	return cfg, nil
}

// valueProblems merges the problems convert found and Validate's, in the
// order of the schema's keys. Each value is reported once: not where its
// JSON type was wrong (the check of the zero value left in its place
// would only repeat it), and not by Validate where convert already did.
func valueProblems(bound jsonfile.Bound, converted, validated []jsonfile.Problem) []jsonfile.Problem {
	var out []jsonfile.Problem
	reported := map[string]bool{}
	for _, p := range converted {
		if !bound.WrongType(p.Path) {
			out = append(out, p)
			reported[p.Path] = true
		}
	}
	for _, p := range validated {
		if !bound.WrongType(p.Path) && !reported[p.Path] {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, func(a, b jsonfile.Problem) int { return slices.Compare(schemaOrder(a.Path), schemaOrder(b.Path)) })
	return out
}

// schemaOrder is the sort key of a key path: the place of its top-level
// key in fileConfig, then, in an array of objects, the element's index
// and the place of its key in the element. Paths that tie (keys of one
// map) keep the order they were found in; a key the schema lacks sorts
// last.
func schemaOrder(path string) []int {
	end := strings.IndexAny(path, ".[")
	if end < 0 {
		end = len(path)
	}
	top, rest := path[:end], path[end:]
	rank, ok := schemaRanks[top]
	if !ok {
		return []int{math.MaxInt}
	}
	index, sub, found := strings.Cut(strings.TrimPrefix(rest, "["), "].")
	n, err := strconv.Atoi(index)
	if !strings.HasPrefix(rest, "[") || !found || err != nil {
		return []int{rank}
	}
	return []int{rank, n, schemaRanks[top+"[]."+sub]}
}

// schemaRanks is the place of each key in the schema: of each key of
// fileConfig, and, as "key[].sub", of each key of an array's objects.
var schemaRanks = keyRanks(reflect.TypeFor[fileConfig]())

func keyRanks(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := range t.NumField() {
		key, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[key] = i
		if ft := t.Field(i).Type; ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			for sub, j := range keyRanks(ft.Elem()) {
				out[key+"[]."+sub] = j
			}
		}
	}
	return out
}

func problemStrings(ps []jsonfile.Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// convert returns the Config a bound file describes, and the problems only
// a file can have: a missing or unsupported format, a version that is not
// semver, a session value that is not a string, a kind's policy or target
// that names no value, a limit that is not a positive integer. Every other
// value is carried over as it is, for Validate to check: an entry of an
// array is kept even when it is wrong, so that Validate's indexes are the
// file's. dir is the file's absolute directory, against which relative
// paths resolve.
func (fc *fileConfig) convert(dir string) (Config, []jsonfile.Problem) {
	var ck checker
	switch {
	case fc.Format == nil:
		ck.add("format", "missing (this build reads format %d)", configFormat)
	case *fc.Format != configFormat:
		ck.add("format", "%d is not supported (this build reads format %d)", *fc.Format, configFormat)
	}
	cfg := Config{
		Home: absolute(fc.Home, dir), DataRoot: absolute(fc.DataRoot, dir),
		Capabilities:     convertCapabilities(fc.Capabilities, &ck),
		CapabilityConfig: convertMap[capability.Key](fc.CapabilityConfig, func(v json.RawMessage) json.RawMessage { return v }),
		Points:           convertIDs[contribution.Point](fc.Points), Slots: convertIDs[contribution.Slot](fc.Slots),
		Kinds:  convertKinds(fc.Kinds, &ck),
		Strict: fc.Strict, PoolSize: fc.PoolSize, StartupBudget: time.Duration(fc.StartupBudget),
		Policy:       convertMap[string](fc.Policy, func(v string) FailurePolicy { return FailurePolicy(v) }),
		SlotOwners:   convertMap[contribution.Slot](fc.SlotOwners, func(v string) string { return v }),
		DrainTimeout: time.Duration(fc.DrainTimeout), PluginConfig: fc.PluginConfig,
		Supervision: fc.Supervision.convert(),
		PluginEnv: convertMap[string](fc.PluginEnv, func(vars map[string]fileEnvVar) map[string]EnvVar {
			out := make(map[string]EnvVar, len(vars))
			for name, v := range vars {
				out[name] = EnvVar(v)
			}
			return out
		}),
		DefaultLimits:    convertDefaultLimits(fc.DefaultLimits, &ck),
		Limits:           convertLimits(fc.Limits, &ck),
		Confinement:      fc.Confinement.convert(),
		Activation:       convertActivation(fc),
		HandshakeTimeout: time.Duration(fc.HandshakeTimeout), Session: convertSession(fc.Session, &ck),
		ValidateProviderInput: fc.ValidateProviderInput, MaxCallDepth: fc.MaxCallDepth,
		Signatures: convertSignatures(fc.Signatures, dir),
	}
	d := fc.Deadlines
	cfg.Deadlines = Deadlines{Intercept: time.Duration(d.Intercept), Strategy: time.Duration(d.Strategy),
		Provider: time.Duration(d.Provider), Action: time.Duration(d.Action)}
	cfg.MaxCallDuration = time.Duration(fc.MaxCallDuration)
	if fc.Host != nil {
		cfg.Host = protocol.HostInfo{Name: fc.Host.Name, Version: fc.Host.Version}
	}
	return cfg, ck.problems
}

// absolute resolves a relative path against dir; "" stays "".
func absolute(path, dir string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// convertIDs converts a file's list of IDs; nil when it has none.
func convertIDs[T ~string](in []string) []T {
	var out []T
	for _, s := range in {
		out = append(out, T(s))
	}
	return out
}

// convertMap converts each value of a file's map; nil when it has none.
func convertMap[K ~string, V, W any](in map[string]V, f func(V) W) map[K]W {
	if len(in) == 0 {
		return nil
	}
	out := make(map[K]W, len(in))
	for k, v := range in {
		out[K(k)] = f(v)
	}
	return out
}

// convertCapabilities keeps every entry; one whose version is not strict
// semver has none (Validate reports no second problem there).
func convertCapabilities(in []fileCapability, ck *checker) []capability.Provided {
	var out []capability.Provided
	for i, c := range in {
		p := capability.Provided{Key: capability.Key(c.Capability)}
		v, err := semver.StrictNewVersion(c.Version)
		if err != nil {
			ck.add(fmt.Sprintf("capabilities[%d].version", i), "%q is not a valid semver version", c.Version)
		} else {
			p.Version = v
		}
		out = append(out, p)
	}
	return out
}

func convertSession(in map[string]json.RawMessage, ck *checker) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for _, key := range slices.Sorted(maps.Keys(in)) {
		var v string
		if err := json.Unmarshal(in[key], &v); err != nil {
			ck.add("session."+key, "must be a string, got %s", in[key])
			continue
		}
		out[key] = v
	}
	return out
}

func (s fileSupervision) convert() Supervision {
	return Supervision{HeartbeatInterval: time.Duration(s.HeartbeatInterval), HeartbeatTimeout: time.Duration(s.HeartbeatTimeout),
		HangTimeout: time.Duration(s.HangTimeout), CrashBudget: s.CrashBudget, CrashWindow: time.Duration(s.CrashWindow),
		BackoffMin: time.Duration(s.BackoffMin), BackoffMax: time.Duration(s.BackoffMax)}
}

// convertLimits checks limits: each one set is a positive integer (a
// Config's zero limit means the default, which a file says by leaving it
// out).
func convertLimits(in map[string]fileLimits, ck *checker) map[string]pluginpkg.ResourceLimits {
	if len(in) == 0 {
		return nil
	}
	out := map[string]pluginpkg.ResourceLimits{}
	for _, pkg := range slices.Sorted(maps.Keys(in)) {
		out[pkg] = in[pkg].convert("limits."+pkg, ck)
	}
	return out
}

// convertDefaultLimits checks default_limits as convertLimits does.
func convertDefaultLimits(in *fileLimits, ck *checker) pluginpkg.ResourceLimits {
	if in == nil {
		return pluginpkg.ResourceLimits{}
	}
	return in.convert("default_limits", ck)
}

// convert returns the limits at path, each one set a positive integer.
func (f fileLimits) convert(path string, ck *checker) pluginpkg.ResourceLimits {
	positive := func(field string, v *int64) uint64 {
		if v == nil {
			return 0
		}
		if *v <= 0 {
			ck.add(path+"."+field, "must be a positive integer, got %d", *v)
			return 0
		}
		return uint64(*v)
	}
	return pluginpkg.ResourceLimits{
		OpenFiles:         positive("open_files", f.OpenFiles),
		AddressSpace:      positive("address_space", f.AddressSpace),
		QueueBytes:        positive("queue_bytes", f.QueueBytes),
		StreamWindowBytes: positive("stream_window_bytes", f.StreamWindowBytes),
		LogLinesPerSecond: positive("log_lines_per_second", f.LogLinesPerSecond),
		MalformedMessages: positive("malformed_messages", f.MalformedMessages),
	}
}
