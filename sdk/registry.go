package sdk

import (
	"maps"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/protocol"
)

// registry holds a plugin's declarations, in registration order, and their
// handlers by name. A session serves from its own clone, so the one it
// serves from is never mutated.
type registry struct {
	provides  []protocol.CapabilityDecl
	decls     protocol.InitializeResult // only the declaration lists are used
	intercept map[string]InterceptFunc
	strategy  map[string]HandlerFunc
	provider  map[string]HandlerFunc
	stream    map[string]StreamFunc // streaming providers (stream.go)
	action    map[string]HandlerFunc
	contrib   map[contribKey]HandlerFunc // protocol 1.1; a nil handler is read only
}

func newRegistry() registry {
	return registry{
		intercept: map[string]InterceptFunc{},
		strategy:  map[string]HandlerFunc{},
		provider:  map[string]HandlerFunc{},
		stream:    map[string]StreamFunc{},
		action:    map[string]HandlerFunc{},
		contrib:   map[contribKey]HandlerFunc{},
	}
}

// clone returns a deep enough copy: slices and maps are new, handlers and
// raw schemas are shared (they are never mutated).
func (r *registry) clone() registry {
	return registry{
		provides: slices.Clone(r.provides),
		decls: protocol.InitializeResult{
			Interceptors:  slices.Clone(r.decls.Interceptors),
			Strategies:    slices.Clone(r.decls.Strategies),
			Providers:     slices.Clone(r.decls.Providers),
			Actions:       slices.Clone(r.decls.Actions),
			Contributions: slices.Clone(r.decls.Contributions),
		},
		intercept: maps.Clone(r.intercept),
		strategy:  maps.Clone(r.strategy),
		provider:  maps.Clone(r.provider),
		stream:    maps.Clone(r.stream),
		action:    maps.Clone(r.action),
		contrib:   maps.Clone(r.contrib),
	}
}

// initResult returns the initialize result announcing name, version and
// every declaration (result encodes it).
func (r *registry) initResult(name, version string) protocol.InitializeResult {
	return protocol.InitializeResult{
		ProtocolVersion: protocolVersion,
		Name:            name,
		Version:         version,
		Provides:        r.provides,
		Interceptors:    r.decls.Interceptors,
		Strategies:      r.decls.Strategies,
		Providers:       r.decls.Providers,
		Actions:         r.decls.Actions,
		Contributions:   r.decls.Contributions,
		Features:        announced,
	}
}

// unknownTarget is the CodeUnknownTarget error for a call naming a kind
// ("point", "slot", "provider", "action") the plugin did not declare. It
// lists the declared names, sorted, so the mismatch is visible.
func unknownTarget[V any](kind, name string, declared map[string]V) *protocol.Error {
	names := slices.Sorted(maps.Keys(declared))
	list := "none"
	if len(names) > 0 {
		list = strings.Join(names, ", ")
	}
	return Errorf(protocol.CodeUnknownTarget, "unknown %s %q (declared: %s)", kind, name, list)
}
