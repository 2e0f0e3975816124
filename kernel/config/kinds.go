package config

import (
	"fmt"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/ident"
)

// fileKind is one entry of kernel.json's kinds: a contribution kind the
// host declares beyond the built-in ones.
type fileKind struct {
	Kind   string `json:"kind"`
	Policy string `json:"policy"`
	Target string `json:"target"`
}

// kindPolicies and kindTargets are the values kinds[].policy and
// kinds[].target accept, in the order messages list them.
var (
	kindPolicies = []contribution.KindPolicy{contribution.Ordered, contribution.Exclusive, contribution.Unique}
	kindTargets  = []contribution.Target{contribution.TargetNone, contribution.TargetPoint, contribution.TargetSlot}
)

// convertKinds checks kernel.json's kinds and returns Config.Kinds: the
// built-in kinds followed by the valid entries, or nil (the built-in kinds
// only) when the file declares none. A kind must be an identifier that is
// neither built in nor declared twice; policy is required, target defaults
// to "none".
func convertKinds(in []fileKind, add func(string, ...any)) []contribution.KindSpec {
	if len(in) == 0 {
		return nil
	}
	out := contribution.DefaultKinds()
	at := map[string]int{}
	for i, k := range in {
		f := fmt.Sprintf("kinds[%d]", i)
		ok := true
		if err := ident.ValidateDotted("kind", k.Kind); err != nil {
			add("%s.kind: %v", f, err)
			ok = false
		} else if contribution.Kind(k.Kind).Builtin() {
			add("%s.kind: %q is a built-in kind; it cannot be redeclared", f, k.Kind)
			ok = false
		} else if j, dup := at[k.Kind]; dup {
			add("%s.kind: %q is declared twice (also kinds[%d])", f, k.Kind, j)
			ok = false
		} else {
			at[k.Kind] = i
		}
		policy, pok := parseName(k.Policy, kindPolicies)
		switch {
		case k.Policy == "":
			add(`%s.policy: missing (one of "ordered", "exclusive", "unique")`, f)
		case !pok:
			add(`%s.policy: %q is not "ordered", "exclusive" or "unique"`, f, k.Policy)
		}
		target, tok := contribution.TargetNone, true
		if k.Target != "" {
			if target, tok = parseName(k.Target, kindTargets); !tok {
				add(`%s.target: %q is not "none", "point" or "slot"`, f, k.Target)
			}
		}
		if ok && pok && tok {
			out = append(out, contribution.KindSpec{Kind: contribution.Kind(k.Kind), Policy: policy, Target: target})
		}
	}
	return out
}

// parseName returns the value among vs whose String is s.
func parseName[T fmt.Stringer](s string, vs []T) (T, bool) {
	for _, v := range vs {
		if v.String() == s {
			return v, true
		}
	}
	var zero T
	return zero, false
}
