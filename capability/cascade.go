package capability

import (
	"fmt"
	"maps"
	"slices"
)

// Cascade adds to failed (member name -> reason) every member of c whose
// non-optional requirement's chosen provider failed, transitively, each
// with the chain in its reason ("requires storage.kv ^1.0, provided by
// "kv", which failed: ..."), and returns the names it added, in the order
// it added them (breadth first from the failed members in name order). A
// member already in failed keeps its reason; a requirement the host
// satisfies never cascades. It is the one implementation of the failure
// cascade: a generation's build and its plan both call it.
func (c *Closure) Cascade(failed map[string]string) []string {
	dependents := map[string][]Choice{}
	for _, ch := range c.Choices {
		if !ch.Requirement.Optional && ch.Provider != HostProvider {
			dependents[ch.Provider] = append(dependents[ch.Provider], ch)
		}
	}
	var added []string
	queue := slices.Sorted(maps.Keys(failed))
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		for _, ch := range dependents[name] {
			if _, done := failed[ch.Package]; done {
				continue
			}
			failed[ch.Package] = fmt.Sprintf("requires %s %s, provided by %q, which failed: %s",
				ch.Requirement.Key, ch.Requirement.Constraint, name, failed[name])
			added = append(added, ch.Package)
			queue = append(queue, ch.Package)
		}
	}
	return added
}
