package pluginpkg

import (
	"maps"
	"slices"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/ident"
	"github.com/extkernel/extkernel/internal/jsonfile"
)

// contributes walks runtime.contributes: an object mapping each kind (an
// identifier: a host kind, or the built-in "provider" or "action") to the
// keys the plugin declares contributions of, a non-empty list of
// identifiers without duplicates. It returns the valid entries, nil for
// none.
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
		keys := p.idList(kf, m.Val, kind+" key", func(s string) error { return validateContributedKey(kind, s) })
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
// identifier naming a host kind, or "provider" or "action" (the provider
// refs and action IDs the plugin declares, which a lazy member publishes
// before it runs). The other built-in kinds have their own members
// (intercepts, replaces).
func checkContributedKind(kind string) string {
	if err := ident.ValidateDotted("kind", kind); err != nil {
		return err.Error()
	}
	switch contribution.Kind(kind) {
	case contribution.KindInterceptor:
		return `"interceptor" is a built-in kind: list its points in runtime.intercepts`
	case contribution.KindStrategy:
		return `"strategy" is a built-in kind: list its slots in runtime.replaces`
	}
	return ""
}

// validateContributedKey checks one key of runtime.contributes' kind: a
// provider ref, an action ID, or a host kind's dotted key.
func validateContributedKey(kind, key string) error {
	switch contribution.Kind(kind) {
	case contribution.KindProvider:
		return contribution.ValidateProviderRef(key)
	case contribution.KindAction:
		return contribution.ValidateActionID(key)
	}
	return ident.ValidateDotted(kind+" key", key)
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
			validateID(v, kf, i, what, key, validateContributedKey(string(kind), key), seen)
		}
	}
}
