package generation

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
)

// classify sorts every package of a and b into exactly one class, with the
// reasons for each reload, in name order. A package of a that is down and
// named in keepDown (see Inputs.KeepFailed) is reloaded only when it changed
// itself; otherwise it is unchanged, with one reason saying why it stays
// down, and nothing it depends on reloads it. A running package of a named
// in broken (Inputs.Kept) is unchanged, with one reason saying why, whether
// b holds it (the previous package value) or not (a plan without one).
func classify(a, b *Snapshot, keepDown, broken map[string]string) []Change {
	byName := map[string]*Change{}
	kept := map[string]bool{}
	for _, pb := range b.Packages {
		ch := &Change{Name: pb.Name, To: pb.Version, Class: ClassAdded, Activation: pb.Activation}
		if pa := a.pkg(pb.Name); pa != nil {
			ch.From = pa.Version
			changed, down := directReasons(a.Generation, pa, &pb)
			why, held := keepDown[pb.Name]
			problems, isBroken := broken[pb.Name]
			switch {
			case isBroken && down == "":
				ch.Class, ch.Reasons = ClassUnchanged, []string{keptReason(pa.Version, problems)}
				kept[pb.Name] = true
			case down != "" && held && len(changed) == 0:
				ch.Class, ch.Reasons = ClassUnchanged, []string{down + "; kept down: " + why}
				kept[pb.Name] = true
			case down != "":
				ch.Class, ch.Reasons = ClassReloaded, append(changed, down)
			case len(changed) > 0:
				ch.Class, ch.Reasons = ClassReloaded, changed
			default:
				ch.Class = ClassUnchanged
			}
		}
		byName[pb.Name] = ch
	}
	for _, pa := range a.Packages {
		switch problems, isBroken := broken[pa.Name]; {
		case byName[pa.Name] != nil:
		case isBroken && pa.Status != StatusFailed && pa.Status != StatusCrashed:
			byName[pa.Name] = &Change{Name: pa.Name, From: pa.Version, To: pa.Version, Class: ClassUnchanged,
				Reasons: []string{keptReason(pa.Version, problems)}, Activation: pa.Activation}
		default:
			byName[pa.Name] = &Change{Name: pa.Name, From: pa.Version, Class: ClassRemoved}
		}
	}
	propagate(b, byName, kept)
	out := make([]Change, 0, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, *byName[name])
	}
	return out
}

// directReasons lists what changed in one package itself and, apart, why
// it is to be started although unchanged: it did not run in generation from
// ("" when it did).
func directReasons(from uint64, a, b *SnapshotPackage) (changed []string, down string) {
	var r []string
	fa, fb := a.Fingerprint, b.Fingerprint
	switch {
	case a.Version != b.Version:
		r = append(r, fmt.Sprintf("version %s -> %s", a.Version, b.Version))
	case fa.Manifest != fb.Manifest:
		r = append(r, "manifest changed")
	}
	if !declaredOnly(a) && !declaredOnly(b) {
		r = append(r, fileReasons(from, fa, fb)...)
	}
	if fa.Config != fb.Config {
		r = append(r, "config changed")
	}
	if a.Activation != b.Activation {
		r = append(r, fmt.Sprintf("activation %s -> %s", activationName(a.Activation), activationName(b.Activation)))
	}
	if a.Required != b.Required {
		r = append(r, fmt.Sprintf("policy %s -> %s", policyName(a.Required), policyName(b.Required)))
	}
	if a.Status == StatusFailed || a.Status == StatusCrashed {
		down = fmt.Sprintf("not running in generation %d (%s)", from, a.Status)
	}
	return r, down
}

// declaredOnly reports whether p is a lazy member whose files were not
// fingerprinted, for it has no process (Fingerprint.WithFiles): its files
// are then no reason to reload it, on either side of a plan. It starts
// from the files there are when it is used; a lazy member whose process
// runs has its files in its snapshot entry, and they are compared.
func declaredOnly(p *SnapshotPackage) bool {
	return p.Activation == pluginpkg.ActivationLazy && p.Fingerprint.Files == ""
}

// activationName is a snapshot's activation as a plan says it.
func activationName(a string) string {
	if a == "" {
		return "eager"
	}
	return a
}

func policyName(required bool) string {
	if required {
		return "required"
	}
	return "optional"
}

// propagate reloads every otherwise unchanged package that depends on an
// added or reloaded one, transitively; a package kept down stays unchanged.
func propagate(b *Snapshot, byName map[string]*Change, kept map[string]bool) {
	dependents := map[string][]string{}
	for _, p := range b.Packages {
		for _, d := range p.DependsOn {
			dependents[d] = append(dependents[d], p.Name)
		}
	}
	var queue []string
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		if c := byName[name].Class; c == ClassAdded || c == ClassReloaded {
			queue = append(queue, name)
		}
	}
	for len(queue) > 0 {
		dep := queue[0]
		queue = queue[1:]
		for _, name := range dependents[dep] {
			ch := byName[name]
			if ch.Class == ClassAdded || kept[name] {
				continue // it starts anyway, or not at all: its providers' changes are no reason
			}
			ch.Reasons = append(ch.Reasons, fmt.Sprintf("depends on %q, which is %s", dep, byName[dep].Class))
			if ch.Class == ClassUnchanged {
				ch.Class = ClassReloaded
				queue = append(queue, name)
			}
		}
	}
}

// contributionDiff compares interceptor chains and slot owners.
func contributionDiff(a, b []SnapshotContribution) ([]ChainDiff, []SlotDiff) {
	ca, cb := chains(a), chains(b)
	var out []ChainDiff
	for _, pt := range unionKeys(ca, cb) {
		d := ChainDiff{Point: pt, Before: nonNil(ca[pt]), After: nonNil(cb[pt])}
		d.Changed = fmt.Sprint(d.Before) != fmt.Sprint(d.After)
		out = append(out, d)
	}
	sa, sb := owners(a), owners(b)
	var slots []SlotDiff
	for _, sl := range unionKeys(sa, sb) {
		d := SlotDiff{Slot: sl, Before: sa[sl], After: sb[sl]}
		d.Changed = d.Before != d.After
		slots = append(slots, d)
	}
	return nonNilSlice(out), nonNilSlice(slots)
}

// chains returns each point's plugins in effective order: priority
// descending, then plugin name, then declaration order.
func chains(cs []SnapshotContribution) map[string][]string {
	var ic []SnapshotContribution
	for _, c := range cs {
		if c.Kind == contribution.KindInterceptor {
			ic = append(ic, c)
		}
	}
	sort.SliceStable(ic, func(i, j int) bool {
		x, y := ic[i], ic[j]
		if x.Priority != y.Priority {
			return x.Priority > y.Priority
		}
		if x.Plugin != y.Plugin {
			return x.Plugin < y.Plugin
		}
		return x.Seq < y.Seq
	})
	out := map[string][]string{}
	for _, c := range ic {
		out[c.Key] = append(out[c.Key], c.Plugin)
	}
	return out
}

// owners returns each slot's claimants joined by ", " (one name when the
// slot has a single owner).
func owners(cs []SnapshotContribution) map[string]string {
	out := map[string]string{}
	for _, c := range cs {
		if c.Kind != contribution.KindStrategy {
			continue
		}
		if out[c.Key] != "" {
			out[c.Key] += ", "
		}
		out[c.Key] += c.Plugin
	}
	return out
}

func unionKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
