package contribution

import (
	"fmt"
	"sync"
	"testing"
)

func sampleContributions() []Contribution {
	return []Contribution{
		NewInterceptor(hs("audit"), "tool.before", 100, 0),
		NewInterceptor(hs("guard"), "tool.before", 500, 0),
		NewInterceptor(hs("audit"), "tool.after", 0, 1),
		NewStrategy(hs("memory"), "context.compactor", 0),
		NewProvider(hs("memory"), Provider{Ref: "kv", Schema: `{"type":"object"}`}, 1),
		NewAction(hs("ui"), Action{ID: "panel.open", Title: "Open panel"}, 0),
		NewAction(hs("ui"), Action{ID: "panel.close", Title: "Close panel"}, 1),
	}
}

func TestAllIsDeterministic(t *testing.T) {
	spec := testHost()
	spec.Points = append(spec.Points, "tool.before") // duplicates are harmless
	r := mustBuild(t, spec, sampleContributions()...)
	var got []string
	for _, c := range r.All() {
		got = append(got, string(c.Kind)+" "+c.Key+" "+c.Source.Plugin)
	}
	equal(t, "All", got, []string{
		"action plugin/ui/panel.close ui",
		"action plugin/ui/panel.open ui",
		"interceptor tool.after audit",
		"interceptor tool.before guard",
		"interceptor tool.before audit",
		"provider plugin/memory/kv memory",
		"strategy context.compactor memory",
	})
	if r.Len() != len(got) {
		t.Errorf("Len = %d, want %d", r.Len(), len(got))
	}
	var actions []string
	for _, c := range r.Actions() {
		actions = append(actions, c.Payload.(Action).Title)
	}
	equal(t, "Actions", actions, []string{"Close panel", "Open panel"})
	if got, want := r.Points(), []Point{"prompt.submit", "tool.after", "tool.before"}; !equalSlices(got, want) {
		t.Errorf("Points = %q, want %q", got, want)
	}
	if got, want := r.Slots(), []Slot{"context.compactor", "memory.store"}; !equalSlices(got, want) {
		t.Errorf("Slots = %q, want %q", got, want)
	}
	if c, ok := r.Provider("plugin/memory/kv"); !ok || c.Payload.(Provider).Schema != `{"type":"object"}` {
		t.Errorf("Provider = %v, %v", c, ok)
	}
	if _, ok := r.Provider("kv"); ok {
		t.Error("Provider(un-namespaced ref) found something")
	}
}

func equalSlices[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestImmutability(t *testing.T) {
	spec := testHost()
	spec.SlotOwners = map[Slot]string{"context.compactor": "memory"}
	in := sampleContributions()
	in = append(in, NewStrategy(hs("other"), "context.compactor", 0))
	b := NewBuilder(spec)
	b.Add(in...)

	// Mutating the spec and the inputs after Add does not reach the build.
	spec.Points[0] = "changed"
	spec.SlotOwners["context.compactor"] = "other"
	in[0].Priority = -1000
	in[1].Source.Plugin = "mallory"
	r, err := b.Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	want := []string{"guard:500:0", "audit:100:0"}
	equal(t, "Interceptors", names(r.Interceptors("tool.before")), want)
	if o, _ := r.SlotOwner("context.compactor"); o.Source.Plugin != "memory" {
		t.Errorf("SlotOwner = %q, want memory (spec copied at NewBuilder)", o.Source.Plugin)
	}

	// Mutating inputs after Build, and building again, leaves r alone.
	b.Add(NewInterceptor(hs("late"), "tool.before", 1000, 0))
	if _, err := b.Build(); err != nil {
		t.Fatalf("second Build: %v", err)
	}
	equal(t, "Interceptors after second Build", names(r.Interceptors("tool.before")), want)

	// Appending to a shared lookup result copies it (capacity == length).
	got := r.Interceptors("tool.before")
	_ = append(got, NewInterceptor(hs("x"), "tool.before", 0, 0))
	_ = append(r.Interceptors("tool.after"), NewInterceptor(hs("x"), "tool.after", 0, 0))
	equal(t, "Interceptors after append", names(r.Interceptors("tool.before")), want)
	equal(t, "Interceptors(tool.after) after append", names(r.Interceptors("tool.after")), []string{"audit:0:1"})

	// Inspection methods return copies.
	all := r.All()
	all[0].Key = "changed"
	ov := r.Overridden()
	ov[0].Source.Plugin = "changed"
	ws := r.Warnings()
	ws[0].Sources[0].Plugin = "changed"
	ws[0].Message = "changed"
	r.Points()[0] = "changed"
	r.Slots()[0] = "changed"
	if r.All()[0].Key == "changed" || r.Overridden()[0].Source.Plugin == "changed" ||
		r.Warnings()[0].Sources[0].Plugin == "changed" || r.Warnings()[0].Message == "changed" ||
		r.Points()[0] == "changed" || r.Slots()[0] == "changed" {
		t.Error("mutating a copy returned by the registry changed the registry")
	}
}

func TestLookupsDoNotAllocate(t *testing.T) {
	r := mustBuild(t, testHost(), sampleContributions()...)
	var sink int
	lookups := map[string]func(){
		"Interceptors": func() { sink += len(r.Interceptors("tool.before")) },
		"SlotOwner":    func() { c, _ := r.SlotOwner("context.compactor"); sink += c.Seq },
		"Provider":     func() { c, _ := r.Provider("plugin/memory/kv"); sink += c.Seq },
		"Actions":      func() { sink += len(r.Actions()) },
		"Get":          func() { sink += len(r.Get(KindInterceptor, "tool.after")) },
		"missing":      func() { sink += len(r.Interceptors("prompt.submit")) },
	}
	for name, f := range lookups {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s: %v allocs per run, want 0", name, n)
		}
	}
	_ = sink
}

func TestZeroRegistry(t *testing.T) {
	var r Registry
	if r.Interceptors("tool.before") != nil || r.Actions() != nil || r.Len() != 0 || r.All() != nil {
		t.Error("zero Registry is not empty")
	}
	if _, ok := r.SlotOwner("context.compactor"); ok {
		t.Error("zero Registry has a slot owner")
	}
	if _, ok := r.Provider("plugin/a/b"); ok {
		t.Error("zero Registry has a provider")
	}
}

// TestConcurrentReaders reads one snapshot from many goroutines; run with
// -race.
func TestConcurrentReaders(t *testing.T) {
	r := mustBuild(t, testHost(), sampleContributions()...)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if len(r.Interceptors("tool.before")) != 2 || len(r.Actions()) != 2 {
					t.Error("unexpected lookup result")
					return
				}
				r.SlotOwner("context.compactor")
				r.Provider("plugin/memory/kv")
				r.All()
			}
		})
	}
	wg.Wait()
}

// TestBuilderGrow: Grow makes room for that many Adds, which then do not
// grow the builder; a negative or zero n changes nothing; what is built
// is the same as without it.
func TestBuilderGrow(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 5} {
		b := NewBuilder(HostSpec{})
		b.Grow(n)
		if n <= 0 && b.cs != nil {
			t.Fatalf("Grow(%d) allocated", n)
		}
		if c := cap(b.cs); c < n {
			t.Fatalf("Grow(%d): room for %d", n, c)
		}
		before := cap(b.cs)
		for i := range n {
			b.Add(NewProvider(hs("a"), Provider{Ref: fmt.Sprint("r", i)}, i))
		}
		if n > 0 && cap(b.cs) != before {
			t.Fatalf("Grow(%d) then %d Adds grew the builder from %d to %d", n, n, before, cap(b.cs))
		}
		reg, err := b.Build()
		if err != nil || reg.Len() != max(n, 0) {
			t.Fatalf("Grow(%d): Build = %v, %v", n, reg, err)
		}
	}
}
