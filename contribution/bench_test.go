package contribution

import (
	"fmt"
	"testing"
)

// mixed1000 returns a host with 50 points and 100 slots and 1,000
// contributions from 100 plugins: per plugin 4 interceptors, 1 strategy
// claim, 3 providers and 2 UI actions.
func mixed1000() (HostSpec, []Contribution) {
	var spec HostSpec
	for i := range 50 {
		spec.Points = append(spec.Points, Point(fmt.Sprintf("point.p%02d", i)))
	}
	for i := range 100 {
		spec.Slots = append(spec.Slots, Slot(fmt.Sprintf("slot.s%03d", i)))
	}
	var cs []Contribution
	for i := range 100 {
		src := hs(fmt.Sprintf("plugin-%03d", i))
		for j := range 4 {
			cs = append(cs, NewInterceptor(src, spec.Points[(i*4+j)%50], (i*37+j)%2001-1000, j))
		}
		cs = append(cs, NewStrategy(src, spec.Slots[i], 4))
		for j := range 3 {
			cs = append(cs, NewProvider(src, Provider{Ref: fmt.Sprintf("ref.r%d", j)}, 5+j))
		}
		for j := range 2 {
			cs = append(cs, NewAction(src, Action{ID: fmt.Sprintf("p%03d.action%d", i, j), Title: "Run"}, 8+j))
		}
	}
	return spec, cs
}

func BenchmarkBuild1000(b *testing.B) {
	spec, cs := mixed1000()
	b.ReportAllocs()
	for b.Loop() {
		bl := NewBuilder(spec)
		bl.Add(cs...)
		r, err := bl.Build()
		if err != nil || r.Len() != 1000 {
			b.Fatalf("Build: %v, Len %d", err, r.Len())
		}
	}
}

func benchRegistry(b *testing.B) *Registry {
	spec, cs := mixed1000()
	bl := NewBuilder(spec)
	bl.Add(cs...)
	r, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func BenchmarkInterceptorsLookup(b *testing.B) {
	r := benchRegistry(b)
	p := Point("point.p07")
	if n := len(r.Interceptors(p)); n != 8 {
		b.Fatalf("%d interceptors at %s, want 8", n, p)
	}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n += len(r.Interceptors(p))
	}
}

// BenchmarkMapLookupFloor is the floor for the lookups: a plain map from
// string to slice, the least an index by key can cost.
func BenchmarkMapLookupFloor(b *testing.B) {
	m := make(map[string][]Contribution)
	r := benchRegistry(b)
	for _, p := range r.Points() {
		m[string(p)] = r.Interceptors(p)
	}
	key := "point.p07"
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n += len(m[key])
	}
}

func BenchmarkSlotOwnerLookup(b *testing.B) {
	r := benchRegistry(b)
	b.ReportAllocs()
	var n int
	for b.Loop() {
		c, _ := r.SlotOwner("slot.s042")
		n += c.Seq
	}
}

func BenchmarkProviderLookup(b *testing.B) {
	r := benchRegistry(b)
	id := ProviderID("plugin-042", "ref.r1")
	b.ReportAllocs()
	var n int
	for b.Loop() {
		c, _ := r.Provider(id)
		n += c.Seq
	}
}
