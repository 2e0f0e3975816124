package kernel

import (
	"cmp"
	"maps"
	"slices"

	"github.com/extkernel/extkernel/capability"
)

// Routes returns the number of the published generation and its routes:
// one capability.Route per capability each member's manifest requires, sorted by
// plugin, then capability. It reports what the kernel decided when it
// published the generation and does not say whether a provider is
// running now (Plugins does). Before Start and after Close it returns 0
// and nil. It takes no lock; the generation may be retired as soon as it
// returns.
func (k *Kernel) Routes() (uint64, []capability.Route) {
	l := k.current.Load()
	if l == nil {
		return 0, nil
	}
	var out []capability.Route
	for plugin, byKey := range l.routes {
		for _, rt := range byKey {
			r := capability.Route{Plugin: plugin, Requirement: rt.req, Provider: rt.provider,
				Handled: rt.provider == capability.HostProvider && rt.handler != nil}
			if len(rt.methods) > 0 {
				r.Methods = slices.Sorted(maps.Keys(rt.methods))
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b capability.Route) int {
		return cmp.Or(cmp.Compare(a.Plugin, b.Plugin), cmp.Compare(a.Requirement.Key, b.Requirement.Key))
	})
	return l.gen.Number(), out
}
