package pluginpkg

import (
	"fmt"
	"maps"
	"slices"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/ident"
	"github.com/extkernel/extkernel/internal/jsonfile"
)

// contributes walks runtime.contributes: an object mapping each kind (an
// identifier, none of the built-in kinds) to the keys the plugin may
// declare contributions of, a non-empty list of identifiers without
// duplicates. It returns the valid entries, nil for none.
func (p *manifestParser) contributes(f fieldPath, n *jsonfile.Node) map[contribution.Kind][]string {
	if n.Kind != jsonfile.KindObject {
		p.typeError(f, "an object of arrays of strings", n)
		return nil
	}
	var out map[contribution.Kind][]string
	for _, m := range n.Members {
		kf := f.child(m.Key)
		if p.badKey(kf, m) || p.duplicate(kf, n, m) {
			continue
		}
		if msg := checkContributedKind(m.Key); msg != "" {
			p.add(kf, "%s", msg)
			continue
		}
		kind := m.Key
		keys := p.idList(kf, m.Val, kind+" key", func(s string) error { return ident.ValidateDotted(kind+" key", s) })
		if m.Val.Kind == jsonfile.KindArray && len(m.Val.Elems) == 0 {
			p.add(kf, "%s", noContributedKeys)
			continue
		}
		if len(keys) > 0 {
			if out == nil {
				out = map[contribution.Kind][]string{}
			}
			out[contribution.Kind(kind)] = keys
		}
	}
	return out
}

// noContributedKeys is the message of an empty runtime.contributes list.
const noContributedKeys = "must list at least one key (omit the kind to contribute none)"

// checkContributedKind checks a runtime.contributes member name: an
// identifier naming no built-in kind, whose contributions the manifest
// authorizes elsewhere (intercepts, replaces) or not at all (providers and
// actions, namespaced by plugin).
func checkContributedKind(kind string) string {
	if err := ident.ValidateDotted("kind", kind); err != nil {
		return err.Error()
	}
	switch contribution.Kind(kind) {
	case contribution.KindInterceptor:
		return `"interceptor" is a built-in kind: list its points in runtime.intercepts`
	case contribution.KindStrategy:
		return `"strategy" is a built-in kind: list its slots in runtime.replaces`
	case contribution.KindProvider, contribution.KindAction:
		return fmt.Sprintf("%q is a built-in kind, which needs no manifest entry (it is namespaced by plugin)", kind)
	}
	return ""
}

// validateContributes is Manifest.Validate's check of Contributes, with
// the rules contributes applies, kinds in sorted order.
func (rt *Runtime) validateContributes(v *validator, f fieldPath) {
	for _, kind := range slices.Sorted(maps.Keys(rt.Contributes)) {
		kf := f.child(string(kind))
		if msg := checkContributedKind(string(kind)); msg != "" {
			v.add(kf, "%s", msg)
			continue
		}
		keys := rt.Contributes[kind]
		if len(keys) == 0 {
			v.add(kf, "%s", noContributedKeys)
		}
		seen := map[string]int{}
		for i, key := range keys {
			what := string(kind) + " key"
			validateID(v, kf, i, what, key, ident.ValidateDotted(what, key), seen)
		}
	}
}
