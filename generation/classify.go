package generation

import (
	"fmt"
	"sort"

	"github.com/extkernel/extkernel/contribution"
)

// classify sorts every package of a and b into exactly one class, with the
// reasons for each reload, in name order.
func classify(a, b *Snapshot) []Change {
	byName := map[string]*Change{}
	for _, pb := range b.Packages {
		ch := &Change{Name: pb.Name, To: pb.Version, Class: ClassAdded}
		if pa := a.pkg(pb.Name); pa != nil {
			ch.From = pa.Version
			ch.Reasons = directReasons(a.Generation, pa, &pb)
			ch.Class = ClassUnchanged
			if len(ch.Reasons) > 0 {
				ch.Class = ClassReloaded
			}
		}
		byName[pb.Name] = ch
	}
	for _, pa := range a.Packages {
		if byName[pa.Name] == nil {
			byName[pa.Name] = &Change{Name: pa.Name, From: pa.Version, Class: ClassRemoved}
		}
	}
	propagate(b, byName)
	out := make([]Change, 0, len(byName))
	for _, name := range sortedNames(byName) {
		out = append(out, *byName[name])
	}
	return out
}

// directReasons lists what changed in one package itself.
func directReasons(from uint64, a, b *SnapshotPackage) []string {
	var r []string
	fa, fb := a.Fingerprint, b.Fingerprint
	switch {
	case a.Version != b.Version:
		r = append(r, fmt.Sprintf("version %s -> %s", a.Version, b.Version))
	case fa.Manifest != fb.Manifest:
		r = append(r, "manifest changed")
	}
	r = append(r, fileReasons(from, fa, fb)...)
	if fa.Config != fb.Config {
		r = append(r, "config changed")
	}
	if a.Required != b.Required {
		r = append(r, fmt.Sprintf("policy %s -> %s", policyName(a.Required), policyName(b.Required)))
	}
	if a.Status == StatusFailed || a.Status == StatusCrashed {
		r = append(r, fmt.Sprintf("not running in generation %d (%s)", from, a.Status))
	}
	return r
}

func policyName(required bool) string {
	if required {
		return "required"
	}
	return "optional"
}

// propagate reloads every otherwise unchanged package that depends on an
// added or reloaded one, transitively.
func propagate(b *Snapshot, byName map[string]*Change) {
	dependents := map[string][]string{}
	for _, p := range b.Packages {
		for _, d := range p.DependsOn {
			dependents[d] = append(dependents[d], p.Name)
		}
	}
	var queue []string
	for _, name := range sortedNames(byName) {
		if c := byName[name].Class; c == ClassAdded || c == ClassReloaded {
			queue = append(queue, name)
		}
	}
	for len(queue) > 0 {
		dep := queue[0]
		queue = queue[1:]
		for _, name := range dependents[dep] {
			ch := byName[name]
			if ch.Class == ClassAdded {
				continue // it starts anyway; its providers' changes are no reason
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
	return sortedNames(seen)
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
