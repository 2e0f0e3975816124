package proctest

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// HeapPeaks is what SampleHeap saw: the most HeapInuse and HeapAlloc
// (runtime.MemStats) among its samples, and how many it took.
type HeapPeaks struct {
	InUse, Alloc uint64
	// Live is the most heap the garbage collector found live at the end
	// of a cycle (runtime/metrics /gc/heap/live:bytes): what was held,
	// where InUse and Alloc also count garbage not collected yet.
	Live    uint64
	Samples int
}

// SampleHeap reads the test process's runtime.MemStats at once and then
// every interval, on a goroutine of its own, until the returned stop is
// called, which takes a last sample, ends the goroutine and returns the
// peaks. A test holds a memory bound with it: a peak, not a final value,
// is what a burst of allocations leaves.
func SampleHeap(interval time.Duration) (stop func() HeapPeaks) {
	done := make(chan struct{})
	result := make(chan HeapPeaks, 1)
	go func() {
		var p HeapPeaks
		var ms runtime.MemStats
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		sample := func() {
			runtime.ReadMemStats(&ms)
			metrics.Read(live)
			p.InUse, p.Alloc, p.Samples = max(p.InUse, ms.HeapInuse), max(p.Alloc, ms.HeapAlloc), p.Samples+1
			if live[0].Value.Kind() == metrics.KindUint64 {
				p.Live = max(p.Live, live[0].Value.Uint64())
			}
		}
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			sample()
			select {
			case <-t.C:
			case <-done:
				sample()
				result <- p
				return
			}
		}
	}()
	return func() HeapPeaks {
		close(done)
		return <-result
	}
}

// HeapAfterGC runs a garbage collection and returns the heap in use and
// allocated after it (HeapInuse and HeapAlloc): a baseline for
// SampleHeap's peaks, or what a test's work left behind.
func HeapAfterGC() (inUse, alloc uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse, ms.HeapAlloc
}
