package sidecar

import (
	"fmt"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// builtinDecl names, for each built-in kind, the initialize result member
// that declares it.
var builtinDecl = map[string]string{
	"interceptor": "interceptors", "strategy": "strategies", "provider": "providers", "action": "actions",
}

// checkContributions returns every contribution in ds (initialize's
// contributions, protocol 1.1) that rt, a manifest's runtime, does not
// authorize, each prefixed with its path: a kind the host does not declare
// (kinds), a key the manifest does not list under its kind
// (runtime.contributes), a priority outside the bounds, and a kind and
// key declared twice, which contribution/invoke could not tell apart.
func checkContributions(rt *pluginpkg.Runtime, kinds []contribution.Kind, ds []protocol.ContributionDecl) []string {
	var problems []string
	add := func(i int, format string, a ...any) {
		problems = append(problems, fmt.Sprintf("contributions[%d]: ", i)+fmt.Sprintf(format, a...))
	}
	first := make(map[[2]string]int, len(ds))
	for i, d := range ds {
		switch member, builtin := builtinDecl[d.Kind]; {
		case builtin:
			add(i, "kind %q is built in: declare it in %s", d.Kind, member)
		case !slices.Contains(kinds, contribution.Kind(d.Kind)):
			add(i, "kind %q is not one the host declares (%s)", d.Kind, declaredKinds(kinds))
		case !slices.Contains(rt.Contributes[contribution.Kind(d.Kind)], d.Key):
			add(i, "%s %q is not listed in runtime.contributes under %q", d.Kind, d.Key, d.Kind)
		}
		if d.Priority != nil && !validPriority(*d.Priority) {
			add(i, "priority %d is outside [%d, %d]", *d.Priority, contribution.MinPriority, contribution.MaxPriority)
		}
		k := [2]string{d.Kind, d.Key}
		if at, dup := first[k]; dup {
			add(i, "%s %q is declared twice (also contributions[%d]); declare each kind and key once", d.Kind, d.Key, at)
		} else {
			first[k] = i
		}
	}
	return problems
}

// declaredKinds lists the host's kinds for a message, sorted.
func declaredKinds(kinds []contribution.Kind) string {
	if len(kinds) == 0 {
		return "the host declares no kind beyond the built-in ones"
	}
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	slices.Sort(names)
	return "declared: " + strings.Join(names, ", ")
}
