package benchkit

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/procstat"
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
	p50, p99 := l.Quantiles()
	b.ReportMetric(float64(p50), "p50-ns")
	b.ReportMetric(float64(p99), "p99-ns")
}

// Quantiles returns the median and the 99th percentile (nearest rank).
// It sorts the durations.
func (l *Latencies) Quantiles() (p50, p99 time.Duration) {
	if len(l.d) == 0 {
		return 0, 0
	}
	slices.Sort(l.d)
	return rank(l.d, 0.50), rank(l.d, 0.99)
}

// rank returns the nearest-rank q-quantile of the sorted d.
func rank(d []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(d))+0.5) - 1
	return d[min(max(i, 0), len(d)-1)]
}

// Callers runs b.N calls of call spread over callers goroutines, each
// taking the next call from a shared counter (so up to callers calls are
// outstanding at once), and reports the rate as calls/s and the plugin
// process's CPU time per call (see PluginCPU). The first error fails the
// benchmark.
func Callers(b *testing.B, pid, callers int, call func() error) {
	cpu := PluginCPU(b, pid)
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
	cpu()
}

// RoundTrip times b.N sequential calls, after 100 untimed warm-up calls,
// and reports allocations, the latency percentiles (Latencies.Report) and
// the plugin process's CPU time per call (see PluginCPU). The first error
// fails the benchmark.
func RoundTrip(b *testing.B, pid int, call func() error) {
	for range 100 {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	lat := NewLatencies(b.N)
	cpu := PluginCPU(b, pid)
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
	cpu()
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
		_, closed := startStop(ctx, b, "", start)
		closing += closed
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/plugin")
	b.ReportMetric(float64(closing.Nanoseconds())/float64(b.N), "close-ns/op")
}

// PluginCPU reads the CPU time (user and system) process pid has used so
// far and returns the function that reports, as plugin-cpu-ns/op, what it
// used since, divided by b.N. pid 0 reports nothing. The source is
// /proc/<pid>/stat, in clock ticks of 10 ms (USER_HZ is 100 on Linux), so
// a benchmark should keep the plugin busy for at least a second.
func PluginCPU(b *testing.B, pid int) (report func()) {
	if pid == 0 {
		return func() {}
	}
	before, err := ProcessCPU(pid)
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		after, err := ProcessCPU(pid)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64((after-before).Nanoseconds())/float64(b.N), "plugin-cpu-ns/op")
	}
}

// ProcessCPU returns the user and system CPU time process pid has used,
// from /proc/<pid>/stat.
func ProcessCPU(pid int) (time.Duration, error) {
	st, err := procstat.Read(pid)
	if err != nil {
		return 0, err
	}
	const tick = 10 * time.Millisecond // 1/USER_HZ
	return time.Duration(st.UTime+st.STime) * tick, nil
}

// Starter starts a set of plugins and returns the function that stops
// them; see ColdStartPaired.
type Starter struct {
	Name  string
	Start func(context.Context) (stop func() error, err error)
}

// ColdStartPaired measures the starters side by side: each iteration
// runs every starter once, in an order that rotates with the iteration
// (so none always follows the same neighbour), stops what it started
// outside the measured time, and records its start time. It reports each
// starter's median as <name>-ns/op and, for every starter after the first,
// the ratio of its median to the first's as <name>/<first>. Taking the
// ratio of medians of interleaved runs keeps a change in the machine's
// load from landing on one side of a comparison, which separate
// sub-benchmarks run a minute apart cannot. ns/op is the sum of one start
// of each and means little.
func ColdStartPaired(b *testing.B, starters []Starter) {
	ctx := context.Background()
	times := make([][]time.Duration, len(starters))
	for i := range times {
		times[i] = make([]time.Duration, 0, b.N)
	}
	b.ResetTimer()
	for i := range b.N {
		for j := range starters {
			k := (i + j) % len(starters)
			took, _ := startStop(ctx, b, starters[k].Name+": ", starters[k].Start)
			times[k] = append(times[k], took)
		}
	}
	b.StopTimer()
	medians := make([]float64, len(starters))
	for k, s := range starters {
		slices.Sort(times[k])
		medians[k] = float64(times[k][len(times[k])/2].Nanoseconds())
		b.ReportMetric(medians[k], s.Name+"-ns/op")
		if k > 0 {
			b.ReportMetric(medians[k]/medians[0], s.Name+"/"+starters[0].Name)
		}
	}
}

// startStop runs start on b's timer, then the stop it returns with the
// timer stopped, and returns how long each took. A failure of either ends
// the benchmark, its message prefixed with what.
func startStop(ctx context.Context, b *testing.B, what string, start func(context.Context) (func() error, error)) (took, closing time.Duration) {
	began := time.Now()
	stop, err := start(ctx)
	took = time.Since(began)
	b.StopTimer()
	began = time.Now()
	if stop != nil {
		err = errors.Join(err, stop())
	}
	closing = time.Since(began)
	if err != nil {
		b.Fatalf("%s%v", what, err)
	}
	b.StartTimer()
	return took, closing
}
