package parallel

import (
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestFor: every index is visited exactly once, never more than workers
// at a time, for counts below, at and above the bound.
func TestFor(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{
		{0, 4}, {1, 4}, {3, 1}, {3, 0}, {4, 4}, {64, 8}, {1000, 3},
	} {
		seen := make([]atomic.Int32, tc.n)
		var running, most atomic.Int32
		For(tc.n, tc.workers, func(i int) {
			r := running.Add(1)
			for {
				m := most.Load()
				if r <= m || most.CompareAndSwap(m, r) {
					break
				}
			}
			seen[i].Add(1)
			running.Add(-1)
		})
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Errorf("n=%d workers=%d: index %d ran %d times", tc.n, tc.workers, i, c)
			}
		}
		if limit := int32(max(tc.workers, 1)); most.Load() > limit {
			t.Errorf("n=%d workers=%d: %d ran at once", tc.n, tc.workers, most.Load())
		}
	}
}

// TestForReachesWorkers: tasks that wait run on every worker at once (the
// helpers start one after the other, but all of them start): 4 tasks that
// each wait for the 4 to be running all return.
func TestForReachesWorkers(t *testing.T) {
	for _, workers := range []int{2, 4, 8} {
		var running atomic.Int32
		all := make(chan struct{})
		var timedOut atomic.Bool
		For(workers, workers, func(int) {
			if running.Add(1) == int32(workers) {
				close(all)
			}
			select {
			case <-all:
			case <-time.After(10 * time.Second):
				timedOut.Store(true)
			}
		})
		if timedOut.Load() {
			t.Errorf("workers=%d: only %d of %d tasks ran at once", workers, running.Load(), workers)
		}
	}
}
