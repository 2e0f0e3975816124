package config

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/inputcheck"
	"github.com/extkernel/extkernel/internal/jsonfile"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
)

// Validate checks every rule of c's values, the one check of a Config:
// Parse applies it to what a file holds, and kernel.New and
// kernel.Kernel.Reconfigure to the Config they are given. A field left
// zero means its default and is valid, and so is the zero Config; an entry
// of a list or map must still be whole (a capability needs a version, an
// added kind a policy, a slot owner a name). The rules, each problem named
// by its key in the file (docs/config.md):
//
//   - durations (startup_budget, drain_timeout, deadlines.*,
//     max_call_duration, supervision.*, handshake_timeout) are not
//     negative, and
//     handshake_timeout is at most 60s, the largest a manifest may set;
//   - pool_size and max_call_depth are not negative (a positive one is a
//     bound, zero the default), nor is supervision.crash_budget;
//   - capabilities[i] has a valid capability key and a version;
//   - each Handlers entry (handlers.<key>, a Go-only field) is non-nil and
//     serves a capability listed in Capabilities;
//   - each capability_config.<key> names a capability listed in
//     Capabilities and is valid JSON;
//   - points[i] and slots[i] are valid IDs;
//   - kinds: an added kind is a valid identifier, none of the built-in
//     ones, declared once, with a policy and a valid target;
//   - policy.<package> is "required", "optional" or "" (the manifest's);
//   - slot_owners.<slot> is a valid slot owned by a named package;
//   - plugin_config.<package> is valid JSON;
//   - plugin_env.<package> is a valid package name, and each of its
//     variables a usable environment variable name outside EXTKERNEL_*;
//   - validate_provider_input is set only in a program that links
//     kernel/inputschema in (its validator).
//
// Home, DataRoot, Host, Strict, StreamWindow, Session, Limits,
// FirstGeneration, Observer and Logger take any value; kernel.New requires a Home of its own accord. No rule relates two
// durations: a heartbeat timeout at or above the hang timeout still marks
// the plugin unresponsive before it is stopped.
//
// Entries of Kinds are named as the file's kinds names them, which lists
// only the kinds a host adds: a built-in kind with its built-in spec is
// not numbered (the first time it appears), so kinds[0] is the first kind
// after contribution.DefaultKinds().
//
// Validate returns nil or a *Error listing every problem, in the order of
// the file's keys, with an empty Path: `pool_size: must be at least 1, got
// -1`. It never changes c.
func (c Config) Validate() error {
	if ps := c.problems(); len(ps) > 0 {
		return &Error{Problems: problemStrings(ps)}
	}
	return nil
}

// problems returns what Validate reports, with each problem's key path
// apart so that Parse can merge them with the file's own.
func (c Config) problems() []jsonfile.Problem {
	var ck checker
	ck.capabilities(c.Capabilities, c.Handlers)
	ck.capabilityConfig(c.Capabilities, c.CapabilityConfig)
	for i, p := range c.Points {
		ck.err(fmt.Sprintf("points[%d]", i), p.Validate())
	}
	for i, s := range c.Slots {
		ck.err(fmt.Sprintf("slots[%d]", i), s.Validate())
	}
	ck.kinds(c.Kinds)
	ck.notNegative("pool_size", c.PoolSize, "must be at least 1, got %d")
	ck.duration("startup_budget", c.StartupBudget)
	ck.policy(c.Policy)
	ck.slotOwners(c.SlotOwners)
	ck.duration("deadlines.intercept", c.Deadlines.Intercept)
	ck.duration("deadlines.strategy", c.Deadlines.Strategy)
	ck.duration("deadlines.provider", c.Deadlines.Provider)
	ck.duration("deadlines.action", c.Deadlines.Action)
	ck.duration("max_call_duration", c.MaxCallDuration)
	ck.duration("drain_timeout", c.DrainTimeout)
	ck.pluginConfig(c.PluginConfig)
	ck.supervision(c.Supervision)
	ck.pluginEnv(c.PluginEnv)
	ck.duration("handshake_timeout", c.HandshakeTimeout)
	if c.HandshakeTimeout > wire.MaxHandshakeTimeout {
		ck.add("handshake_timeout", "%q exceeds the maximum of %v", jsonfile.Duration(c.HandshakeTimeout), wire.MaxHandshakeTimeout)
	}
	if c.ValidateProviderInput && inputcheck.Lookup() == nil {
		ck.add("validate_provider_input", "no JSON Schema validator is linked into this program: import _ %q", inputcheck.Import)
	}
	ck.notNegative("max_call_depth", c.MaxCallDepth, "must be at least 1, got %d")
	ck.confinement(c.Confinement)
	ck.activation(c.Activation)
	ck.signatures(c.Signatures)
	return ck.problems
}

// checker collects problems, each with its key path.
type checker struct{ problems []jsonfile.Problem }

func (ck *checker) add(path, format string, a ...any) {
	ck.problems = append(ck.problems, jsonfile.Problem{Path: path, Msg: fmt.Sprintf(format, a...)})
}

// err adds err, if any, at path.
func (ck *checker) err(path string, err error) {
	if err != nil {
		ck.add(path, "%v", err)
	}
}

// notNegative refuses a negative n with format, which takes n.
func (ck *checker) notNegative(path string, n int, format string) {
	if n < 0 {
		ck.add(path, format, n)
	}
}

// duration refuses a negative d in the words a file's duration is
// refused with.
func (ck *checker) duration(path string, d time.Duration) {
	if d < 0 {
		ck.add(path, "%q is not a positive duration such as \"5s\"", jsonfile.Duration(d))
	}
}

func (ck *checker) capabilities(provided []capability.Provided, handlers map[capability.Key]capability.Handler) {
	for i, p := range provided {
		ck.err(fmt.Sprintf("capabilities[%d].capability", i), p.Key.Validate())
		if p.Version == nil {
			ck.add(fmt.Sprintf("capabilities[%d].version", i), "missing or not a valid semver version")
		}
	}
	for _, key := range slices.Sorted(maps.Keys(handlers)) {
		switch {
		case handlers[key] == nil:
			ck.add("handlers."+string(key), "the handler is nil")
		case !slices.ContainsFunc(provided, func(p capability.Provided) bool { return p.Key == key }):
			ck.add("handlers."+string(key), "the host does not provide %q (add it to capabilities)", key)
		}
	}
}

// capabilityConfig checks that each capability_config entry configures a
// capability the host provides, with valid JSON.
func (ck *checker) capabilityConfig(provided []capability.Provided, configs map[capability.Key]json.RawMessage) {
	for _, key := range slices.Sorted(maps.Keys(configs)) {
		path := "capability_config." + string(key)
		switch {
		case !slices.ContainsFunc(provided, func(p capability.Provided) bool { return p.Key == key }):
			ck.add(path, "the host does not provide %q (add it to capabilities)", key)
		case configs[key] != nil && !json.Valid(configs[key]):
			ck.add(path, "is not valid JSON")
		}
	}
}

func (ck *checker) policy(policy map[string]FailurePolicy) {
	for _, name := range slices.Sorted(maps.Keys(policy)) {
		switch policy[name] {
		case FailureDefault, FailureRequired, FailureOptional:
		default:
			ck.add("policy."+name, "%q is not \"required\" or \"optional\"", policy[name])
		}
	}
}

func (ck *checker) slotOwners(owners map[contribution.Slot]string) {
	for _, slot := range slices.Sorted(maps.Keys(owners)) {
		path := "slot_owners." + string(slot)
		switch err := slot.Validate(); {
		case err != nil:
			ck.err(path, err)
		case owners[slot] == "":
			ck.add(path, "owner must name a package")
		}
	}
}

func (ck *checker) pluginConfig(configs map[string]json.RawMessage) {
	for _, pkg := range slices.Sorted(maps.Keys(configs)) {
		if v := configs[pkg]; v != nil && !json.Valid(v) {
			ck.add("plugin_config."+pkg, "is not valid JSON")
		}
	}
}

func (ck *checker) supervision(s Supervision) {
	ck.duration("supervision.heartbeat_interval", s.HeartbeatInterval)
	ck.duration("supervision.heartbeat_timeout", s.HeartbeatTimeout)
	ck.duration("supervision.hang_timeout", s.HangTimeout)
	ck.notNegative("supervision.crash_budget", s.CrashBudget, "must be a non-negative integer, got %d")
	ck.duration("supervision.crash_window", s.CrashWindow)
	ck.duration("supervision.backoff_min", s.BackoffMin)
	ck.duration("supervision.backoff_max", s.BackoffMax)
}

// pluginEnv checks plugin_env: package names are valid, variable names
// are environment variable names outside the reserved EXTKERNEL_ prefix.
func (ck *checker) pluginEnv(env map[string]map[string]EnvVar) {
	for _, pkg := range slices.Sorted(maps.Keys(env)) {
		if err := pluginpkg.ValidateName(pkg); err != nil {
			ck.err("plugin_env."+pkg, err)
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(env[pkg])) {
			if !validEnvName(name) || strings.HasPrefix(name, pluginpkg.ReservedEnvPrefix) {
				ck.add("plugin_env."+pkg+"."+name,
					"%q is not a usable environment variable name (letters, digits, '_'; not EXTKERNEL_*)", name)
			}
		}
	}
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
