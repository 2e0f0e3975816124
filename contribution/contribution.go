package contribution

import (
	"strconv"
)

// Priority bounds. A higher priority runs first; see Ordered.
const (
	MinPriority = -1000
	MaxPriority = 1000
)

// Scope says who makes a contribution: the host itself or a plugin.
type Scope int

// Scopes. The zero Scope is invalid.
const (
	// ScopeHost: the host program registers the contribution itself. Its
	// Source has no plugin name.
	ScopeHost Scope = iota + 1
	// ScopePlugin: a plugin package contributes; its Source names it.
	ScopePlugin
)

// String returns "host" or "plugin".
func (s Scope) String() string {
	switch s {
	case ScopeHost:
		return "host"
	case ScopePlugin:
		return "plugin"
	}
	return "Scope(" + strconv.Itoa(int(s)) + ")"
}

// Origin says where a plugin's contribution was declared.
type Origin string

// Origins of plugin contributions.
const (
	// OriginManifest: the contribution comes from the package manifest
	// (runtime.intercepts, runtime.replaces).
	OriginManifest Origin = "manifest"
	// OriginHandshake: the plugin declared it in its initialize result.
	OriginHandshake Origin = "handshake"
)

// Source says who contributed something and where it was declared.
type Source struct {
	Scope Scope
	// Plugin is the plugin package's name: required for ScopePlugin, empty
	// for ScopeHost.
	Plugin string
	// Version is the plugin's version, for diagnostics only.
	Version string
	// Origin is required for ScopePlugin and ignored for ScopeHost.
	Origin Origin
}

// PluginSource returns the Source of a plugin's contribution.
func PluginSource(plugin, version string, origin Origin) Source {
	return Source{Scope: ScopePlugin, Plugin: plugin, Version: version, Origin: origin}
}

// HostSource returns the Source of a contribution the host makes itself.
func HostSource() Source { return Source{Scope: ScopeHost} }

// String names the source the way problem messages do: `"memory"
// (handshake)` for a plugin, "the host" for the host.
func (s Source) String() string {
	if s.Scope == ScopeHost {
		return "the host"
	}
	if s.Origin == "" {
		return strconv.Quote(s.Plugin)
	}
	return strconv.Quote(s.Plugin) + " (" + string(s.Origin) + ")"
}

// Contribution is one thing a plugin (or the host) contributes. It is a plain
// value: a Builder copies it, and a Registry holds its own copy, shared
// read-only with callers of its lookups.
type Contribution struct {
	Kind Kind
	// Key is what the contribution attaches to: a Point for interceptors, a
	// Slot for strategies, the namespaced provider ID (ProviderID) for
	// providers, the namespaced action ID (ActionID) for UI actions; for
	// host kinds, as their KindSpec.Target says.
	Key    string
	Source Source
	// Priority orders contributions of Ordered kinds: HIGHER runs FIRST.
	// It must lie within MinPriority..MaxPriority for every kind; other
	// policies ignore it.
	Priority int
	// Seq is the declaration order within its source (the index in the
	// manifest list or handshake declaration). It breaks priority and
	// plugin-name ties.
	Seq int
	// Payload carries the kind's details: Interceptor, Strategy, Provider
	// or Action (a value, not a pointer) for the built-in kinds, matching
	// Key; for host kinds, Custom when a plugin's handshake declared it,
	// anything the host chooses for its own. Built-in payloads are
	// immutable values; a host kind's payload should be one too, since
	// lookups share it.
	Payload any
}

// Interceptor is the payload of a KindInterceptor contribution.
type Interceptor struct {
	Point Point
}

// Strategy is the payload of a KindStrategy contribution.
type Strategy struct {
	Slot Slot
}

// Provider is the payload of a KindProvider contribution.
type Provider struct {
	// Ref is the plugin-local reference (dotted grammar); the registry key
	// is ProviderID(plugin, Ref).
	Ref         string
	Description string
	// Schema is the provider's JSON schema as raw JSON text ("" if none).
	// It is a string so that the registry can share it immutably.
	Schema string
}

// Action is the payload of a KindAction contribution.
type Action struct {
	// ID is the plugin-local action ID (dotted grammar); the registry key
	// is ActionID(plugin, ID), so IDs need only be unique per plugin.
	ID string
	// Title is what the UI shows; it must not be empty.
	Title string
	// Placement is a host-defined hint for where the action appears.
	Placement string
}

// NewInterceptor returns an interceptor contribution at point.
func NewInterceptor(src Source, point Point, priority, seq int) Contribution {
	return Contribution{Kind: KindInterceptor, Key: string(point), Source: src, Priority: priority, Seq: seq,
		Payload: Interceptor{Point: point}}
}

// NewStrategy returns a claim on slot.
func NewStrategy(src Source, slot Slot, seq int) Contribution {
	return Contribution{Kind: KindStrategy, Key: string(slot), Source: src, Seq: seq,
		Payload: Strategy{Slot: slot}}
}

// NewProvider returns a provider contribution keyed by its namespaced ID:
// ProviderID(src.Plugin, p.Ref) for a plugin, HostProviderID(p.Ref) for the
// host.
func NewProvider(src Source, p Provider, seq int) Contribution {
	return Contribution{Kind: KindProvider, Key: providerKey(src, p.Ref), Source: src, Seq: seq, Payload: p}
}

// NewAction returns a UI action contribution keyed by its namespaced ID:
// ActionID(src.Plugin, a.ID) for a plugin, HostActionID(a.ID) for the host.
func NewAction(src Source, a Action, seq int) Contribution {
	return Contribution{Kind: KindAction, Key: actionKey(src, a.ID), Source: src, Seq: seq, Payload: a}
}

func providerKey(src Source, ref string) string {
	if src.Scope == ScopeHost {
		return HostProviderID(ref)
	}
	return ProviderID(src.Plugin, ref)
}

func actionKey(src Source, id string) string {
	if src.Scope == ScopeHost {
		return HostActionID(id)
	}
	return ActionID(src.Plugin, id)
}
