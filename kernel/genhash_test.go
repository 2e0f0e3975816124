package kernel

import (
	"testing"

	"github.com/extkernel/extkernel/kernel/observe"
)

// TestPublishedEventsCarryHash: generation-published and its warnings
// carry the published generation's hash, its identity (issue 27 item 4).
func TestPublishedEventsCarryHash(t *testing.T) {
	home, _ := reloadHome(t, newSpawnLog(t))
	published := make(chan observe.Event, 4)
	k := startKernelSubscribed(t, testConfig(home), func(e observe.Event) {
		if e.Type == observe.EventGenerationPublished {
			published <- e
		}
	})
	e := <-published
	g := k.Current()
	if h := g.Hash(); e.Hash != h || len(h) != 64 || e.Generation != g.Number() {
		t.Fatalf("event %+v, generation %d hash %s", e, g.Number(), h)
	}
}
