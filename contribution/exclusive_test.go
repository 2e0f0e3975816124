package contribution

import (
	"testing"
)

func TestSlotConflict(t *testing.T) {
	tests := []struct {
		name string
		in   []Contribution
		want []string
	}{
		{
			name: "two claims name both",
			in: []Contribution{
				NewStrategy(hs("summarizer"), "context.compactor", 0),
				NewStrategy(hs("memory"), "context.compactor", 0),
			},
			want: []string{
				`error conflict: slot "context.compactor" is claimed by both "memory" (handshake) and "summarizer" (handshake); name its owner in the host config's slot_owners`,
			},
		},
		{
			name: "three claims name all",
			in: []Contribution{
				NewStrategy(hs("c"), "memory.store", 0),
				NewStrategy(ms("a"), "memory.store", 0),
				NewStrategy(hs("b"), "memory.store", 1),
			},
			want: []string{
				`error conflict: slot "memory.store" is claimed by "a" (manifest), "b" (handshake) and "c" (handshake); name its owner in the host config's slot_owners`,
			},
		},
		{
			name: "one plugin claiming twice is a duplicate, not a conflict",
			in: []Contribution{
				NewStrategy(ms("memory"), "memory.store", 0),
				NewStrategy(hs("memory"), "memory.store", 0),
			},
			want: []string{
				`error duplicate: slot "memory.store" is declared more than once by "memory": "memory" (handshake) and "memory" (manifest); declare it once`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tryBuild(t, testHost(), tt.in...)
			equal(t, "problems", problemsOf(t, err), tt.want)
		})
	}
}

func TestSlotOwnerFromConfig(t *testing.T) {
	spec := testHost()
	spec.SlotOwners = map[Slot]string{"context.compactor": "memory"}
	r := mustBuild(t, spec,
		NewStrategy(hs("summarizer"), "context.compactor", 0),
		NewStrategy(hs("memory"), "context.compactor", 0),
		NewStrategy(hs("archiver"), "context.compactor", 2),
	)
	owner, ok := r.SlotOwner("context.compactor")
	if !ok || owner.Source.Plugin != "memory" {
		t.Fatalf("SlotOwner = %v, %v; want memory's claim", owner, ok)
	}
	equal(t, "Overridden", names(r.Overridden()), []string{"archiver:0:2", "summarizer:0:0"})
	equal(t, "Warnings", render(r.Warnings()), []string{
		`warning overridden: slot "context.compactor": the claim of "archiver" (handshake) is overridden by "memory" (handshake), the owner named in the host config's slot_owners`,
		`warning overridden: slot "context.compactor": the claim of "summarizer" (handshake) is overridden by "memory" (handshake), the owner named in the host config's slot_owners`,
	})
	if w := r.Warnings()[0]; len(w.Sources) != 2 || w.Sources[0].Plugin != "archiver" || w.Sources[1].Plugin != "memory" {
		t.Errorf("Warnings()[0].Sources = %v, want [archiver memory]", w.Sources)
	}
	if r.Len() != 1 {
		t.Errorf("Len = %d, want 1 (overridden claims are not in effect)", r.Len())
	}
}

func TestSlotOwnerNotClaiming(t *testing.T) {
	const notClaiming = `slot "context.compactor": the host config's slot_owners names "memory" as owner, but "memory" does not claim it; `
	tests := []struct {
		name      string
		strict    bool
		in        []Contribution
		wantOwner string // "" = no owner
		want      []string
	}{
		{
			name: "no claims, lenient: host default", want: []string{
				"warning owner-not-claiming: " + notClaiming + "no plugin claims it, so the host's default runs",
			},
		},
		{
			name: "no claims, strict", strict: true, want: []string{
				"error owner-not-claiming: " + notClaiming + "no plugin claims it, so the host's default runs",
			},
		},
		{
			name: "another sole claimant owns it, lenient", wantOwner: "summarizer",
			in: []Contribution{NewStrategy(hs("summarizer"), "context.compactor", 0)},
			want: []string{
				"warning owner-not-claiming: " + notClaiming + `it is claimed by "summarizer" (handshake)`,
			},
		},
		{
			name: "another sole claimant, strict", strict: true,
			in: []Contribution{NewStrategy(hs("summarizer"), "context.compactor", 0)},
			want: []string{
				"error owner-not-claiming: " + notClaiming + `it is claimed by "summarizer" (handshake)`,
			},
		},
		{
			name: "two other claimants still conflict",
			in: []Contribution{
				NewStrategy(hs("summarizer"), "context.compactor", 0),
				NewStrategy(hs("archiver"), "context.compactor", 0),
			},
			want: []string{
				`error conflict: slot "context.compactor" is claimed by both "archiver" (handshake) and "summarizer" (handshake); name its owner in the host config's slot_owners`,
				"warning owner-not-claiming: " + notClaiming + `it is claimed by "archiver" (handshake) and "summarizer" (handshake)`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := testHost()
			spec.Strict = tt.strict
			spec.SlotOwners = map[Slot]string{"context.compactor": "memory"}
			r, err := tryBuild(t, spec, tt.in...)
			if hasError(tt.want) {
				equal(t, "problems", problemsOf(t, err), tt.want)
				return
			}
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			equal(t, "Warnings", render(r.Warnings()), tt.want)
			owner, ok := r.SlotOwner("context.compactor")
			if ok != (tt.wantOwner != "") || owner.Source.Plugin != tt.wantOwner {
				t.Errorf("SlotOwner = %q, %v; want %q", owner.Source.Plugin, ok, tt.wantOwner)
			}
		})
	}
}

func TestUnclaimedSlotHasNoOwner(t *testing.T) {
	r := mustBuild(t, testHost(), NewStrategy(hs("memory"), "memory.store", 0))
	if c, ok := r.SlotOwner("context.compactor"); ok {
		t.Errorf("SlotOwner(unclaimed) = %v, true; want no owner", c)
	}
	if c, ok := r.SlotOwner("memory.store"); !ok || c.Source.Plugin != "memory" || c.Payload != (Strategy{Slot: "memory.store"}) {
		t.Errorf("SlotOwner(memory.store) = %v, %v; want memory's claim", c, ok)
	}
}

func hasError(problems []string) bool {
	for _, p := range problems {
		if len(p) > 6 && p[:6] == "error " {
			return true
		}
	}
	return false
}
