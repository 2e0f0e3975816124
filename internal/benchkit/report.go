package benchkit

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Latencies holds one duration per call of a benchmark, in a slice
// allocated before the timer starts so recording allocates nothing.
type Latencies struct{ d []time.Duration }

// NewLatencies returns room for n durations.
func NewLatencies(n int) *Latencies { return &Latencies{d: make([]time.Duration, 0, n)} }

// Add records one call's duration.
func (l *Latencies) Add(d time.Duration) { l.d = append(l.d, d) }

// Report reports the median and the 99th percentile (nearest rank) as the
// metrics p50-ns and p99-ns. It sorts the durations.
func (l *Latencies) Report(b *testing.B) {
	if len(l.d) == 0 {
		return
	}
	slices.Sort(l.d)
	b.ReportMetric(float64(rank(l.d, 0.50)), "p50-ns")
	b.ReportMetric(float64(rank(l.d, 0.99)), "p99-ns")
}

// rank returns the nearest-rank q-quantile of the sorted d.
func rank(d []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(d))+0.5) - 1
	return d[min(max(i, 0), len(d)-1)]
}

// Callers runs b.N calls of call spread over callers goroutines, each
// taking the next call from a shared counter (so up to callers calls are
// outstanding at once), and reports the rate as calls/s. The first error
// fails the benchmark.
func Callers(b *testing.B, callers int, call func() error) {
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	b.ResetTimer()
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := call(); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if first != nil {
		b.Fatal(first)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// RoundTrip times b.N sequential calls, after 100 untimed warm-up calls,
// and reports allocations and the latency percentiles (Latencies.Report).
// The first error fails the benchmark.
func RoundTrip(b *testing.B, call func() error) {
	for range 100 {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	lat := NewLatencies(b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		began := time.Now()
		err := call()
		lat.Add(time.Since(began))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	lat.Report(b)
}

// ColdStart times start, which starts n plugins and returns the function
// that stops them all, then runs that function with the timer stopped. It
// reports ns/plugin (timed time per plugin started) and close-ns/op (the
// untimed stop, per iteration).
func ColdStart(b *testing.B, n int, start func(context.Context) (stop func() error, err error)) {
	ctx := context.Background()
	var closing time.Duration
	b.ResetTimer()
	for range b.N {
		stop, err := start(ctx)
		b.StopTimer()
		began := time.Now()
		if stop != nil {
			err = errors.Join(err, stop())
		}
		closing += time.Since(began)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/plugin")
	b.ReportMetric(float64(closing.Nanoseconds())/float64(b.N), "close-ns/op")
}
