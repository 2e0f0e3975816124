package config

import (
	"fmt"
	"slices"

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

// convertKinds returns Config.Kinds for kernel.json's kinds: nil (the
// built-in kinds only) when the file declares none, else the built-in
// kinds followed by every entry, valid or not, so that Validate numbers
// them as the file does. It reports only what a file alone can get wrong:
// a policy or target that names no value. An entry's policy is then left
// zero, which Validate would report again at the same path; Parse keeps
// the first report.
func convertKinds(in []fileKind, ck *checker) []contribution.KindSpec {
	if len(in) == 0 {
		return nil
	}
	out := contribution.DefaultKinds()
	for i, k := range in {
		policy, ok := parseName(k.Policy, kindPolicies)
		if !ok && k.Policy != "" {
			ck.add(fmt.Sprintf("kinds[%d].policy", i), `%q is not "ordered", "exclusive" or "unique"`, k.Policy)
		}
		target := contribution.TargetNone
		if k.Target != "" {
			if target, ok = parseName(k.Target, kindTargets); !ok {
				ck.add(fmt.Sprintf("kinds[%d].target", i), `%q is not "none", "point" or "slot"`, k.Target)
			}
		}
		out = append(out, contribution.KindSpec{Kind: contribution.Kind(k.Kind), Policy: policy, Target: target})
	}
	return out
}

// kinds checks Config.Kinds. A built-in kind with its built-in spec is
// implicit the first time it appears, as it is in the file; every other
// entry is an added kind, numbered from 0 as the file's kinds numbers
// them. An added kind must be an identifier, none of the built-in ones,
// declared once, with a policy and a valid target (default "none").
func (ck *checker) kinds(specs []contribution.KindSpec) {
	builtin := contribution.DefaultKinds()
	implicit := make([]bool, len(builtin))
	seen := map[contribution.Kind]int{} // an added kind's number
	n := 0
	for _, k := range specs {
		if i := slices.Index(builtin, k); i >= 0 && !implicit[i] {
			implicit[i] = true
			continue
		}
		f := fmt.Sprintf("kinds[%d]", n)
		err := ident.ValidateDotted("kind", string(k.Kind))
		j, dup := seen[k.Kind]
		switch {
		case err != nil:
			ck.err(f+".kind", err)
		case k.Kind.Builtin():
			ck.add(f+".kind", "%q is a built-in kind; it cannot be redeclared", k.Kind)
		case dup:
			ck.add(f+".kind", "%q is declared twice (also kinds[%d])", k.Kind, j)
		default:
			seen[k.Kind] = n
		}
		switch {
		case k.Policy == 0:
			ck.add(f+".policy", `missing (one of "ordered", "exclusive", "unique")`)
		case !slices.Contains(kindPolicies, k.Policy):
			ck.add(f+".policy", `%v is not "ordered", "exclusive" or "unique"`, k.Policy)
		}
		if !slices.Contains(kindTargets, k.Target) {
			ck.add(f+".target", `%v is not "none", "point" or "slot"`, k.Target)
		}
		n++
	}
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
