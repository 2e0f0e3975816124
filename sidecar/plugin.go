package sidecar

import (
	"time"

	"github.com/Masterminds/semver/v3"
)

// Plugin is what Start starts and what the plugin's manifest authorizes
// its handshake to declare. The caller that loaded and validated the
// manifest passes it down as this value (package generation builds it from
// a pluginpkg.Package); this package reads no manifest. A Plugin is read,
// never modified: its slices and map may be shared.
type Plugin struct {
	// Name is the plugin's name (its manifest's and directory's).
	Name string
	// Version is the manifest's version, "" when it has none; it is sent
	// in initialize and set as EXTKERNEL_PLUGIN_VERSION.
	Version string
	// Dir is the absolute package directory, the process's working
	// directory.
	Dir string
	// ManifestPath is the manifest's path used in messages
	// ("packages/x/plugin.json").
	ManifestPath string
	// Command is runtime.command as written and validated: a path relative
	// to Dir that stays inside it, or a bare name looked up on PATH. Empty
	// for a declarative package, which has nothing to start.
	Command string
	// Args are runtime.args, passed as they are (there is no shell).
	Args []string
	// Env is runtime.env, set over the allowlisted host environment.
	Env map[string]string
	// HandshakeTimeout is runtime.handshake_timeout; zero defers to
	// Options.HandshakeTimeout.
	HandshakeTimeout time.Duration
	// Pin is the package's pin, or "" for none: an executable pin (64
	// lower-case hex digits, the executable's sha256) or a package pin
	// ("package:<files>:<command>").
	Pin string

	// Provides lists the capabilities the plugin may declare it provides,
	// each at the one version the manifest gives it.
	Provides []Capability
	// Intercepts lists the points it may declare interceptors on
	// (runtime.intercepts).
	Intercepts []string
	// Replaces lists the slots it may declare strategies for
	// (runtime.replaces).
	Replaces []string
	// Contributes lists, per host-declared kind, the keys it may declare
	// contributions of (runtime.contributes, protocol 1.1).
	Contributes map[string][]string
	// Kinds lists the contribution kinds, beyond the four built-in ones,
	// that the host declares: the only kinds a handshake's contributions
	// may have. It comes from the host's configuration, not the manifest;
	// nil means none.
	Kinds []string
	// MinPriority and MaxPriority bound the priority an interceptor, or a
	// contribution of a host-declared kind, may declare, both included.
	MinPriority, MaxPriority int
}

// Capability is a capability a plugin may declare it provides: its key
// and its version.
type Capability struct {
	Key     string
	Version *semver.Version
}

// declarative reports whether p has no runtime: nothing to start.
func (p *Plugin) declarative() bool { return p.Command == "" }
