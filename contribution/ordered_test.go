package contribution

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestInterceptorOrder(t *testing.T) {
	const p = Point("tool.before")
	tests := []struct {
		name string
		in   []Contribution
		want []string
	}{
		{
			name: "higher priority runs first",
			in: []Contribution{
				NewInterceptor(hs("a"), p, -5, 0),
				NewInterceptor(hs("b"), p, 100, 0),
				NewInterceptor(hs("c"), p, 0, 0),
				NewInterceptor(hs("d"), p, MaxPriority, 0),
				NewInterceptor(hs("e"), p, MinPriority, 0),
			},
			want: []string{"d:1000:0", "b:100:0", "c:0:0", "a:-5:0", "e:-1000:0"},
		},
		{
			name: "priority ties broken by plugin name",
			in: []Contribution{
				NewInterceptor(hs("zeta"), p, 10, 0),
				NewInterceptor(hs("alpha"), p, 10, 0),
				NewInterceptor(hs("mid"), p, 10, 0),
				NewInterceptor(hs("low"), p, 1, 0),
			},
			want: []string{"alpha:10:0", "mid:10:0", "zeta:10:0", "low:1:0"},
		},
		{
			name: "host before plugins at equal priority, then declaration order",
			in: []Contribution{
				NewInterceptor(hs("a"), p, 0, 0),
				NewInterceptor(HostSource(), p, 0, 2),
				NewInterceptor(HostSource(), p, 0, 1),
				NewInterceptor(hs("b"), p, 1, 0),
			},
			want: []string{"b:1:0", "host:0:1", "host:0:2", "a:0:0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustBuild(t, testHost(), tt.in...)
			equal(t, "Interceptors", names(r.Interceptors(p)), tt.want)
		})
	}
}

// TestInterceptorOrderIgnoresAddOrder checks that the effective order is a
// function of the contributions, not of the order they were added in.
func TestInterceptorOrderIgnoresAddOrder(t *testing.T) {
	const p = Point("prompt.submit")
	in := []Contribution{
		NewInterceptor(hs("b"), p, 5, 0),
		NewInterceptor(hs("a"), p, 5, 1),
		NewInterceptor(hs("c"), p, 7, 0),
		NewInterceptor(HostSource(), p, 5, 4),
		NewInterceptor(HostSource(), p, 5, 3),
		NewInterceptor(hs("d"), p, -7, 2),
		NewInterceptor(hs("e"), "tool.before", 1000, 0),
	}
	want := []string{"c:7:0", "host:5:3", "host:5:4", "a:5:1", "b:5:0", "d:-7:2"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		cs := slices.Clone(in)
		rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		r := mustBuild(t, testHost(), cs...)
		got := names(r.Interceptors(p))
		if !slices.Equal(got, want) {
			t.Fatalf("permutation %d: Interceptors = %q, want %q", i, got, want)
		}
	}
}

func TestPriorityBounds(t *testing.T) {
	tests := []struct {
		priority int
		wantErr  string
	}{
		{MinPriority, ""},
		{MaxPriority, ""},
		{0, ""},
		{MinPriority - 1, `error invalid: interceptor at point "tool.before" from "a" (handshake), declaration 0: priority: -1001 is outside -1000..1000 (higher runs first)`},
		{MaxPriority + 1, `error invalid: interceptor at point "tool.before" from "a" (handshake), declaration 0: priority: 1001 is outside -1000..1000 (higher runs first)`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.priority), func(t *testing.T) {
			r, err := tryBuild(t, testHost(), NewInterceptor(hs("a"), "tool.before", tt.priority, 0))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				equal(t, "Interceptors", names(r.Interceptors("tool.before")), []string{fmt.Sprintf("a:%d:0", tt.priority)})
				return
			}
			equal(t, "problems", problemsOf(t, err), []string{tt.wantErr})
		})
	}
}

func TestInterceptorDeclaredTwice(t *testing.T) {
	_, err := tryBuild(t, testHost(),
		NewInterceptor(ms("audit"), "tool.before", 0, 0),
		NewInterceptor(hs("audit"), "tool.before", 10, 0),
		NewInterceptor(hs("other"), "tool.before", 10, 0),
	)
	equal(t, "problems", problemsOf(t, err), []string{
		`error duplicate: interceptor at point "tool.before" is declared more than once by "audit": "audit" (handshake) and "audit" (manifest); declare it once`,
	})
}

// TestBuildIgnoresAddOrder checks that problems and the registry are the same
// whatever order contributions are added in.
func TestBuildIgnoresAddOrder(t *testing.T) {
	spec := testHost()
	spec.SlotOwners = map[Slot]string{"memory.store": "b"}
	in := []Contribution{
		NewStrategy(hs("a"), "memory.store", 0),
		NewStrategy(hs("b"), "memory.store", 1),
		NewStrategy(hs("c"), "memory.store", 0),
		NewInterceptor(hs("a"), "tool.nowhere", 3, 1),
		NewInterceptor(hs("b"), "tool.before", 3, 2),
		NewProvider(hs("a"), Provider{Ref: "kv"}, 4),
		NewAction(hs("c"), Action{ID: "open", Title: "Open"}, 5),
	}
	render := func(r *Registry) []string {
		out := render(r.Warnings())
		for _, c := range r.All() {
			out = append(out, fmt.Sprintf("%s %s %s", c.Kind, c.Key, c.Source))
		}
		for _, c := range r.Overridden() {
			out = append(out, "overridden "+c.Source.String())
		}
		return out
	}
	want := render(mustBuild(t, spec, in...))
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 50 {
		cs := slices.Clone(in)
		rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		if got := render(mustBuild(t, spec, cs...)); !slices.Equal(got, want) {
			t.Fatalf("permutation %d:\ngot:  %q\nwant: %q", i, got, want)
		}
	}
	if len(want) != 9 {
		t.Errorf("want has %d lines, expected 3 warnings + 4 in effect + 2 overridden: %q", len(want), want)
	}
}
