package sdktest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// checkContributions checks initialize's contributions of host kinds
// (protocol 1.1) against the manifest (§4.3): each kind and key is listed
// in runtime.contributes (the harness stands for a host declaring every
// kind listed there), its priority is within bounds, and no kind and key
// is declared twice.
func checkContributions(v *verdict, m *pluginpkg.Manifest, ds []protocol.ContributionDecl) {
	var listed map[contribution.Kind][]string
	if m.Runtime != nil {
		listed = m.Runtime.Contributes
	}
	seen := map[[2]string]int{}
	for i, d := range ds {
		path := fmt.Sprintf("contributions[%d]", i)
		if !slices.Contains(listed[contribution.Kind(d.Kind)], d.Key) {
			v.fail("%s: %s %q is not listed in runtime.contributes under %q (§4.3)", path, d.Kind, d.Key, d.Kind)
		}
		if p := d.Priority; p != nil && (*p < contribution.MinPriority || *p > contribution.MaxPriority) {
			v.fail("%s: priority %d is outside [%d, %d] (§4.3)", path, *p, contribution.MinPriority, contribution.MaxPriority)
		}
		k := [2]string{d.Kind, d.Key}
		if j, dup := seen[k]; dup {
			v.fail("%s: %s %q was already declared at index %d (§4.3)", path, d.Kind, d.Key, j)
			continue
		}
		seen[k] = i
	}
}

// checkInputs warns of each entry of Options.Inputs that names no
// declaration of res: a typo would otherwise call the declaration with
// its example or null, silently.
func checkInputs(v *verdict, res *protocol.InitializeResult, inputs map[string]json.RawMessage) {
	declared := map[string]bool{}
	for _, t := range targets(res, nil) {
		declared[t.inputID()] = true
	}
	for _, id := range slices.Sorted(maps.Keys(inputs)) {
		if !declared[id] {
			v.warn("inputs: %q names no declaration of the plugin (an id is <kind>/<id>, e.g. provider/echo or tool/search.web)", id)
		}
	}
}
