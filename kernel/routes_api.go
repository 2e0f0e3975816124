package kernel

import (
	"cmp"
	"maps"
	"slices"

	"github.com/extkernel/extkernel/capability"
)

// Route is where one member's calls of one capability its manifest
// requires go in a published generation (capability/call,
// docs/protocol.md §5.11): the provider the capability closure chose for
// the requirement, as the kernel routes the calls. It is a copy: changing
// it changes no routing.
type Route struct {
	// Plugin is the calling member's package name.
	Plugin string
	// Requirement is the requirement of the member's manifest.
	Requirement capability.Requirement
	// Provider serves the calls: a member's package name,
	// capability.HostProvider for the host, or "" when the requirement is
	// optional and unsatisfied (calls are answered -32006).
	Provider string
	// Methods are the methods a plugin provider maps to its providers
	// (provides[].methods), sorted; a call of any other is answered
	// -32601. Nil for the host, whose handler decides, and for no
	// provider.
	Methods []string
	// Handled reports whether the host registered a handler
	// (config.Config.Handlers) when Provider is capability.HostProvider; calls
	// to a host capability without one are answered -32006. False for every
	// other provider.
	Handled bool
}

// Routes returns the number of the published generation and its routes:
// one Route per capability each member's manifest requires, sorted by
// plugin, then capability. It reports what the kernel decided when it
// published the generation and does not say whether a provider is
// running now (Plugins does). Before Start and after Close it returns 0
// and nil. It takes no lock; the generation may be retired as soon as it
// returns.
func (k *Kernel) Routes() (uint64, []Route) {
	l := k.current.Load()
	if l == nil {
		return 0, nil
	}
	var out []Route
	for plugin, byKey := range l.routes {
		for _, rt := range byKey {
			r := Route{Plugin: plugin, Requirement: rt.req, Provider: rt.provider,
				Handled: rt.provider == capability.HostProvider && rt.handler != nil}
			if len(rt.methods) > 0 {
				r.Methods = slices.Sorted(maps.Keys(rt.methods))
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Route) int {
		return cmp.Or(cmp.Compare(a.Plugin, b.Plugin), cmp.Compare(a.Requirement.Key, b.Requirement.Key))
	})
	return l.gen.Number(), out
}
