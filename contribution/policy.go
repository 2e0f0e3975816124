package contribution

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// resolve applies each kind's policy to every group of valid contributions,
// in (kind, key) order, and assembles the registry from the winners.
func (s *build) resolve() *Registry {
	// One sort groups the accepted contributions by kind and key, each
	// group in Add order (idx is unique), the groups in kind and key order.
	slices.SortFunc(s.accepted, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.c.Kind, b.c.Kind), cmp.Compare(a.c.Key, b.c.Key), cmp.Compare(a.idx, b.idx))
	})
	r := &Registry{
		byKey:  make(map[kindKey][]Contribution, len(s.accepted)),
		byKind: make(map[Kind][]Contribution, len(s.kinds)),
	}
	r.all = make([]Contribution, 0, len(s.accepted))
	claimedSlots := make(map[Slot]bool)
	for i := 0; i < len(s.accepted); {
		j := i + 1
		for j < len(s.accepted) && s.accepted[j].c.Kind == s.accepted[i].c.Kind && s.accepted[j].c.Key == s.accepted[i].c.Key {
			j++
		}
		g := s.accepted[i:j:j]
		i = j
		k := kindKey{g[0].c.Kind, g[0].c.Key}
		spec := g[0].spec
		start := len(r.all)
		switch spec.Policy {
		case Ordered:
			r.all = s.ordered(r.all, spec, g)
		case Exclusive:
			r.all, r.overridden = s.exclusive(r.all, r.overridden, spec, g)
			if spec.Target == TargetSlot {
				claimedSlots[Slot(k.key)] = true
			}
		case Unique:
			r.all = s.unique(r.all, spec, g)
		}
		if len(r.all) > start {
			r.byKey[k] = r.all[start:len(r.all):len(r.all)]
		}
	}
	s.unclaimedOwners(claimedSlots)
	r.index(s)
	return r
}

// dedupe reports a source that declares one key twice and keeps its first
// declaration. g must be sorted byOwner. It applies to Exclusive kinds (one
// claim per plugin and slot) and to plugin interceptors (the intercept call is
// addressed by point, so a second interceptor at the same point could not be
// told apart); the host's interceptors and host Ordered kinds may have several
// contributions per source and key.
func (s *build) dedupe(spec KindSpec, g []entry) []entry {
	out := g[:0:0]
	for i := 0; i < len(g); {
		j := i + 1
		for j < len(g) && g[j].c.Source.Plugin == g[i].c.Source.Plugin {
			j++
		}
		if j-i > 1 && (spec.Policy == Exclusive || spec.Kind == KindInterceptor && g[i].c.Source.Scope == ScopePlugin) {
			run := contributions(g[i:j])
			s.report(Problem{
				Severity: Error, Code: CodeDuplicate, Kind: spec.Kind, Key: g[i].c.Key, Sources: sourcesOf(run),
				Message: fmt.Sprintf("%s is declared more than once by %s: %s; declare it once",
					subject(spec, g[i].c.Key), ownerName(g[i].c.Source), listSources(run)),
			})
			out = append(out, g[i])
		} else {
			out = append(out, g[i:j]...)
		}
		i = j
	}
	return out
}

// ordered appends g in its effective order.
func (s *build) ordered(all []Contribution, spec KindSpec, g []entry) []Contribution {
	slices.SortFunc(g, byOwner)
	g = s.dedupe(spec, g)
	slices.SortFunc(g, effective)
	for _, e := range g {
		all = append(all, *e.c)
	}
	return all
}

// unique appends g's only contribution, or reports a duplicate naming every
// declaration.
func (s *build) unique(all []Contribution, spec KindSpec, g []entry) []Contribution {
	if len(g) == 1 {
		return append(all, *g[0].c)
	}
	slices.SortFunc(g, byOwner)
	cs := contributions(g)
	word := "ID"
	if _, builtin := builtinSpec(spec.Kind); !builtin {
		word = "key"
	}
	s.report(Problem{
		Severity: Error, Code: CodeDuplicate, Kind: spec.Kind, Key: g[0].c.Key, Sources: sourcesOf(cs),
		Message: fmt.Sprintf("%s is declared by %s; each %s %s may be declared once",
			subject(spec, g[0].c.Key), bothOrAll(cs), spec.Kind, word),
	})
	return all
}

// exclusive appends the owner of one key, if there is exactly one, and
// appends claims that lost to a config-named owner to overridden.
func (s *build) exclusive(all, overridden []Contribution, spec KindSpec, g []entry) ([]Contribution, []Contribution) {
	slices.SortFunc(g, byOwner)
	g = s.dedupe(spec, g)
	key := g[0].c.Key
	name, named := "", false
	if spec.Target == TargetSlot {
		name, named = s.host.SlotOwners[Slot(key)]
	}
	if named {
		if i := slices.IndexFunc(g, func(e entry) bool { return e.c.Source.Scope == ScopePlugin && e.c.Source.Plugin == name }); i >= 0 {
			for j, e := range g {
				if j != i {
					overridden = append(overridden, *e.c)
					s.overridden(spec, *e.c, *g[i].c)
				}
			}
			return append(all, *g[i].c), overridden
		}
		s.ownerNotClaiming(spec, key, name, contributions(g))
	}
	if len(g) == 1 {
		return append(all, *g[0].c), overridden
	}
	cs := contributions(g)
	hint := "only one plugin may claim it; disable the others"
	if spec.Target == TargetSlot {
		hint = "name its owner in the host config's slot_owners"
	}
	s.report(Problem{
		Severity: Error, Code: CodeConflict, Kind: spec.Kind, Key: key, Sources: sourcesOf(cs),
		Message: fmt.Sprintf("%s is claimed by %s; %s", subject(spec, key), bothOrAll(cs), hint),
	})
	return all, overridden
}

func (s *build) overridden(spec KindSpec, lost, owner Contribution) {
	s.report(Problem{
		Severity: Warning, Code: CodeOverridden, Kind: spec.Kind, Key: lost.Key,
		Sources: []Source{lost.Source, owner.Source},
		Message: fmt.Sprintf("%s: the claim of %s is overridden by %s, the owner named in the host config's slot_owners",
			subject(spec, lost.Key), lost.Source, owner.Source),
	})
}

// ownerNotClaiming reports a slot_owners entry whose plugin does not claim
// the slot; claims are the slot's actual claimants (possibly none).
func (s *build) ownerNotClaiming(spec KindSpec, key, name string, claims []Contribution) {
	detail := "no plugin claims it, so the host's default runs"
	if len(claims) > 0 {
		detail = "it is claimed by " + listSources(claims)
	}
	s.report(Problem{
		Severity: s.lenient(), Code: CodeOwnerNotClaiming, Kind: spec.Kind, Key: key, Sources: sourcesOf(claims),
		Message: fmt.Sprintf("%s: the host config's slot_owners names %q as owner, but %q does not claim it; %s",
			subject(spec, key), name, name, detail),
	})
}

// unclaimedOwners reports slot_owners entries for declared slots that no
// contribution claims at all.
func (s *build) unclaimedOwners(claimed map[Slot]bool) {
	for _, sl := range slices.Sorted(maps.Keys(s.host.SlotOwners)) {
		name := s.host.SlotOwners[sl]
		if claimed[sl] || !s.slots[sl] || name == "" {
			continue
		}
		s.ownerNotClaiming(KindSpec{Kind: KindStrategy, Policy: Exclusive, Target: TargetSlot}, string(sl), name, nil)
	}
}

func contributions(g []entry) []Contribution {
	out := make([]Contribution, len(g))
	for i, e := range g {
		out[i] = *e.c
	}
	return out
}

// bothOrAll renders `both "a" (handshake) and "b" (handshake)` for two
// contributions and a plain list for more.
func bothOrAll(cs []Contribution) string {
	if len(cs) == 2 {
		return "both " + listSources(cs)
	}
	return listSources(cs)
}

// ownerName names the plugin (or the host) behind a source without origin.
func ownerName(src Source) string {
	if src.Scope == ScopeHost {
		return "the host"
	}
	return strconv.Quote(src.Plugin)
}
