package contribution

import "testing"

// TestCustomKindsNotNamespaced: two plugins declaring one key of a host
// kind meet at that key, so that each policy settles it, and an Exclusive
// host kind targeting slots honours SlotOwners.
func TestCustomKindsNotNamespaced(t *testing.T) {
	spec := testHost()
	spec.Kinds = append(DefaultKinds(),
		KindSpec{Kind: "tool", Policy: Unique},
		KindSpec{Kind: "panel", Policy: Exclusive, Target: TargetSlot},
	)
	custom := func(src Source, kind Kind, key string) Contribution {
		return Contribution{Kind: kind, Key: key, Source: src, Payload: Custom{Title: key, Data: `{"by":"` + src.Plugin + `"}`}}
	}
	t.Run("unique", func(t *testing.T) {
		_, err := tryBuild(t, spec, custom(hs("a"), "tool", "search.web"), custom(hs("b"), "tool", "search.web"))
		equal(t, "problems", problemsOf(t, err), []string{
			`error duplicate: tool "search.web" is declared by both "a" (handshake) and "b" (handshake); each tool key may be declared once`,
		})
	})
	t.Run("exclusive slot kind with an owner", func(t *testing.T) {
		spec.SlotOwners = map[Slot]string{"memory.store": "b"}
		r := mustBuild(t, spec, custom(hs("a"), "panel", "memory.store"), custom(hs("b"), "panel", "memory.store"))
		got := r.Get("panel", "memory.store")
		if len(got) != 1 || got[0].Source.Plugin != "b" || got[0].Payload.(Custom).Data != `{"by":"b"}` {
			t.Errorf("Get(panel) = %v, want b's", got)
		}
		equal(t, "Warnings", render(r.Warnings()), []string{
			`warning overridden: panel slot "memory.store": the claim of "a" (handshake) is overridden by "b" (handshake), the owner named in the host config's slot_owners`,
		})
	})
}
