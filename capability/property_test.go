package capability

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"pgregory.net/rapid"
)

var (
	propKeys        = []Key{"k.a", "k.b", "k.c", "k.d", "k.e"}
	propVersions    = []string{"0.9.0", "1.0.0", "1.2.0", "1.5.0", "2.0.0", "2.1.0"}
	propConstraints = []string{"^1", "^2.0", ">=1.2", "~1.2", "*", "<1.5", "^0.9"}
)

func genProvided(t *rapid.T, label string) Provided {
	return Provided{
		Key:     rapid.SampledFrom(propKeys).Draw(t, label+".key"),
		Version: ver(rapid.SampledFrom(propVersions).Draw(t, label+".version")),
	}
}

// genRequest draws a small random graph: up to 8 packages with random
// provided keys and versions, distinct required keys with random
// constraints, random enabled and optional flags, host capabilities and
// roots (sometimes naming a package that is not installed).
func genRequest(t *rapid.T) Request {
	var req Request
	n := rapid.IntRange(0, 8).Draw(t, "packages")
	for i := range n {
		label := fmt.Sprintf("p%d", i)
		p := Package{
			Name:    label,
			Version: ver(rapid.SampledFrom(propVersions).Draw(t, label+".version")),
			Enabled: rapid.Float64Range(0, 1).Draw(t, label+".enabled") < 0.8,
		}
		for j := range rapid.IntRange(0, 3).Draw(t, label+".provides") {
			p.Provides = append(p.Provides, genProvided(t, fmt.Sprintf("%s.provides[%d]", label, j)))
		}
		keys := rapid.SliceOfNDistinct(rapid.SampledFrom(propKeys), 0, 3, rapid.ID[Key]).Draw(t, label+".requires")
		for _, k := range keys {
			p.Requires = append(p.Requires, Requirement{
				Key:        k,
				Constraint: con(rapid.SampledFrom(propConstraints).Draw(t, label+".constraint")),
				Optional:   rapid.Bool().Draw(t, label+".optional"),
			})
		}
		req.Packages = append(req.Packages, p)
	}
	for j := range rapid.IntRange(0, 2).Draw(t, "host") {
		req.Host = append(req.Host, genProvided(t, fmt.Sprintf("host[%d]", j)))
	}
	if rapid.Bool().Draw(t, "explicit roots") {
		names := []string{"nosuch"}
		for _, p := range req.Packages {
			names = append(names, p.Name)
		}
		req.Roots = rapid.SliceOfN(rapid.SampledFrom(names), 1, 4).Draw(t, "roots")
	}
	return req
}

// shuffle returns a copy of req with Packages, each package's Provides and
// Requires, Host and Roots in a random order.
func shuffle(t *rapid.T, req Request) Request {
	out := Request{
		Packages: rapid.Permutation(req.Packages).Draw(t, "shuffled packages"),
		Host:     rapid.Permutation(req.Host).Draw(t, "shuffled host"),
		Roots:    rapid.Permutation(req.Roots).Draw(t, "shuffled roots"),
	}
	for i := range out.Packages {
		p := &out.Packages[i]
		p.Provides = rapid.Permutation(p.Provides).Draw(t, "shuffled provides")
		p.Requires = rapid.Permutation(p.Requires).Draw(t, "shuffled requires")
	}
	return out
}

func TestResolveProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req := genRequest(t)
		got, err := Resolve(req)
		if err != nil {
			t.Fatalf("Resolve: %v", err)
		}
		again, _ := Resolve(req)
		if !reflect.DeepEqual(got, again) {
			t.Fatalf("not deterministic:\n%s\nvs\n%s", render(got), render(again))
		}
		shuffled, _ := Resolve(shuffle(t, req))
		if !reflect.DeepEqual(got, shuffled) {
			t.Fatalf("depends on input order:\n%s\nvs\n%s", render(got), render(shuffled))
		}
		checkClosure(t, req, got)
	})
}

// checkClosure compares c against a naive resolver that scans every
// package for every requirement.
func checkClosure(t *rapid.T, req Request, c *Closure) {
	byName := map[string]*Package{}
	for i := range req.Packages {
		byName[req.Packages[i].Name] = &req.Packages[i]
	}
	if !slices.IsSorted(c.Members) || !slices.IsSortedFunc(c.Problems, problemOrder) {
		t.Fatalf("members or problems not sorted:\n%s", render(c))
	}
	chosen := map[string]bool{} // providers of some choice
	for _, m := range c.Members {
		p := byName[m]
		if p == nil || !p.Enabled {
			t.Fatalf("member %q is not an enabled package", m)
		}
		var deps []string
		for _, rq := range p.Requires {
			provider := checkRequirement(t, req, c, m, rq)
			if provider != "" && provider != HostProvider {
				chosen[provider] = true
				deps = append(deps, provider)
			}
		}
		slices.Sort(deps)
		if deps = slices.Compact(deps); !slices.Equal(deps, c.DependsOn[m]) {
			t.Fatalf("DependsOn[%q] = %v, want %v", m, c.DependsOn[m], deps)
		}
	}
	if len(c.DependsOn) != len(c.Members) {
		t.Fatalf("DependsOn has %d entries for %d members", len(c.DependsOn), len(c.Members))
	}
	for _, m := range c.Members {
		if !chosen[m] && !isRoot(req, m) {
			t.Fatalf("member %q is neither a root nor a chosen provider", m)
		}
	}
	for _, p := range req.Packages {
		if p.Enabled && isRoot(req, p.Name) && !c.Has(p.Name) {
			t.Fatalf("enabled root %q is not a member", p.Name)
		}
	}
	if (c.Err() == nil) != (len(c.Errors()) == 0) {
		t.Fatalf("Err() = %v with %d error problems", c.Err(), len(c.Errors()))
	}
	checkCycles(t, c)
}

func isRoot(req Request, name string) bool {
	return len(req.Roots) == 0 || slices.Contains(req.Roots, name)
}

// checkRequirement checks the outcome of one requirement of member m and
// returns the chosen provider, or "" when there is none.
func checkRequirement(t *rapid.T, req Request, c *Closure, m string, rq Requirement) string {
	type offer struct {
		name string
		v    *semver.Version
	}
	var best *offer
	distinct := map[string]bool{}
	missing, disabledFits := true, false
	consider := func(name string, enabled bool, p Provided) {
		if p.Key != rq.Key {
			return
		}
		missing = false
		fits := rq.Constraint.Check(p.Version)
		if fits && !enabled {
			disabledFits = true
		}
		if !fits || !enabled {
			return
		}
		distinct[name] = true
		o := &offer{name, p.Version}
		if best == nil || better(o.name, o.v, best.name, best.v) {
			best = o
		}
	}
	for _, h := range req.Host {
		consider(HostProvider, true, h)
	}
	for _, p := range req.Packages {
		for _, pr := range p.Provides {
			consider(p.Name, p.Enabled, pr)
		}
	}
	i := slices.IndexFunc(c.Choices, func(ch Choice) bool { return ch.Package == m && ch.Requirement.Key == rq.Key })
	j := slices.IndexFunc(c.Problems, func(p Problem) bool { return p.Package == m && p.Requirement.Key == rq.Key })
	if best != nil {
		if i < 0 || j >= 0 {
			t.Fatalf("%s %s: want a choice of %s and no problem\n%s", m, rq.Key, best.name, render(c))
		}
		ch := c.Choices[i]
		if ch.Provider != best.name || !ch.Version.Equal(best.v) || ch.Candidates != len(distinct) {
			t.Fatalf("%s %s: chose %s %s (%d), want %s %s (%d)", m, rq.Key,
				ch.Provider, ch.Version, ch.Candidates, best.name, best.v, len(distinct))
		}
		if ch.Provider != HostProvider && !c.Has(ch.Provider) {
			t.Fatalf("chosen provider %q is not a member", ch.Provider)
		}
		return best.name
	}
	if i >= 0 || j < 0 {
		t.Fatalf("%s %s: want a problem and no choice\n%s", m, rq.Key, render(c))
	}
	cause := VersionMismatch
	switch {
	case missing:
		cause = Missing
	case disabledFits:
		cause = ProviderDisabled
	}
	p := c.Problems[j]
	wantKind, wantSev := cause, Error
	if rq.Optional {
		wantKind, wantSev = OptionalUnsatisfied, Warning
	}
	if p.Cause != cause || p.Kind != wantKind || p.Severity != wantSev {
		t.Fatalf("%s %s: problem %s/%s/%s, want %s/%s/%s", m, rq.Key, p.Severity, p.Kind, p.Cause, wantSev, wantKind, cause)
	}
	return ""
}

// better reports whether offer a beats offer b under the choice rule.
func better(aName string, a *semver.Version, bName string, b *semver.Version) bool {
	if (aName == HostProvider) != (bName == HostProvider) {
		return aName == HostProvider
	}
	if c := a.Compare(b); c != 0 {
		return c > 0
	}
	return aName < bName
}

// checkCycles compares the cycle warnings with the cyclic groups a naive
// reachability search finds in DependsOn.
func checkCycles(t *rapid.T, c *Closure) {
	reach := map[string]map[string]bool{}
	for _, m := range c.Members {
		seen := map[string]bool{}
		stack := slices.Clone(c.DependsOn[m])
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if !seen[v] {
				seen[v] = true
				stack = append(stack, c.DependsOn[v]...)
			}
		}
		reach[m] = seen
	}
	groups := map[string]bool{} // lowest name of each cyclic group
	for _, m := range c.Members {
		if !reach[m][m] {
			continue
		}
		low := m
		for v := range reach[m] {
			if reach[v][m] && v < low {
				low = v
			}
		}
		groups[low] = true
	}
	var cycles int
	for _, p := range c.Problems {
		if p.Kind != Cycle {
			continue
		}
		cycles++
		if len(p.Cycle) == 0 || !groups[p.Cycle[0]] {
			t.Fatalf("cycle %v does not start a cyclic group %v", p.Cycle, groups)
		}
		for i, v := range p.Cycle {
			next := p.Cycle[(i+1)%len(p.Cycle)]
			if !slices.Contains(c.DependsOn[v], next) || v < p.Cycle[0] {
				t.Fatalf("cycle %v: no edge %s -> %s, or not lowest first", p.Cycle, v, next)
			}
		}
		if !strings.HasPrefix(p.Message, "dependency cycle: "+strings.Join(p.Cycle, " -> ")+" -> "+p.Cycle[0]) {
			t.Fatalf("cycle %v message %q", p.Cycle, p.Message)
		}
	}
	if cycles != len(groups) {
		t.Fatalf("%d cycle problems for %d cyclic groups\n%s", cycles, len(groups), render(c))
	}
}
