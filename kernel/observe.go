package kernel

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// dispatching tells the observer, if any, that a dispatch of kind at key
// begins; it returns the dispatch's context and the function to call with
// its error, nil (and ctx) without an observer or when the observer gives
// none.
func (k *Kernel) dispatching(ctx context.Context, kind contribution.Kind, key string) (context.Context, func(error)) {
	obs := k.config().Observer
	if obs == nil {
		return ctx, nil
	}
	c, end := obs.Dispatch(ctx, observe.DispatchInfo{Kind: kind, Key: key})
	if c == nil {
		c = ctx
	}
	return c, end
}

// latencyBuckets is the number of histogram buckets: bucket i counts calls
// that took less than latencyBase<<i (the last one, everything longer).
const (
	latencyBuckets = 26
	latencyBase    = 16 * time.Microsecond
)

// callStats are one plugin's counters: atomics, so that a call counts
// itself without a lock.
type callStats struct {
	calls, errors atomic.Uint64
	inFlight      atomic.Int64
	latency       [latencyBuckets]atomic.Uint64
	// bake is the watch of the plugin's version under bake, told of every
	// call that ends; nil when none runs (bake.go).
	bake atomic.Pointer[bakeWatch]
}

// bucket returns the histogram bucket of d.
func bucket(d time.Duration) int {
	if d < 0 {
		return 0
	}
	return min(bits.Len64(uint64(d/latencyBase)), latencyBuckets-1)
}

// snapshot reads s. The counters are read one by one, so a snapshot taken
// while calls end may be off by those calls; it is never torn within one
// counter.
func (s *callStats) snapshot() observe.CallStats {
	out := observe.CallStats{Calls: s.calls.Load(), Errors: s.errors.Load(), InFlight: s.inFlight.Load()}
	var counts [latencyBuckets]uint64
	var total uint64
	for i := range counts {
		counts[i] = s.latency[i].Load()
		total += counts[i]
	}
	if total == 0 {
		return out
	}
	percentile := func(p float64) time.Duration {
		rank := uint64(math.Ceil(p * float64(total)))
		var seen uint64
		for i, n := range counts {
			seen += n
			if seen >= rank {
				return latencyBase << i
			}
		}
		return latencyBase << (latencyBuckets - 1)
	}
	out.P50, out.P90, out.P99 = percentile(0.50), percentile(0.90), percentile(0.99)
	return out
}

// statsTable holds every plugin's counters, by name, for the kernel's
// lifetime. A published generation looks its members' counters up once
// (newLive), so a call finds them without a map lookup.
type statsTable struct {
	mu     sync.Mutex
	plugin map[string]*callStats
}

// of returns plugin's counters, creating them.
func (t *statsTable) of(plugin string) *callStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.plugin == nil {
		t.plugin = map[string]*callStats{}
	}
	s := t.plugin[plugin]
	if s == nil {
		s = new(callStats)
		t.plugin[plugin] = s
	}
	return s
}

// lookup returns plugin's counters, or nil when no call was ever counted.
func (t *statsTable) lookup(plugin string) *callStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.plugin[plugin]
}

// callSpan is one call being counted and observed, a value on the caller's
// stack: beginCall, make the call with ctx, then end.
type callSpan struct {
	ctx   context.Context
	st    *callStats
	start time.Time
	done  func(observe.CallOutcome)
}

// beginCall starts counting a call to a plugin whose counters are st (nil
// for a call a host handler serves, which no plugin's counters count), and
// tells the observer obs (nil for none). The caller makes the call with
// the returned span's ctx and then calls end, once.
func beginCall(ctx context.Context, st *callStats, obs observe.Observer, info observe.CallInfo) callSpan {
	sp := callSpan{ctx: ctx, st: st, start: time.Now()}
	if st != nil {
		st.inFlight.Add(1)
	}
	if obs != nil {
		sp.ctx, sp.done = obs.Call(ctx, info)
		if sp.ctx == nil {
			sp.ctx = ctx
		}
	}
	return sp
}

// end counts the call's outcome and tells the observer.
func (sp *callSpan) end(err error) {
	d := time.Since(sp.start)
	if st := sp.st; st != nil {
		st.inFlight.Add(-1)
		st.calls.Add(1)
		if err != nil {
			st.errors.Add(1)
		}
		st.latency[bucket(d)].Add(1)
		if w := st.bake.Load(); w != nil {
			w.callEnded()
		}
	}
	if sp.done != nil {
		sp.done(observe.CallOutcome{Duration: d, Err: err, ErrorType: errorType(err)})
	}
}

// errorTypes name the failures of a call that are not JSON-RPC error
// answers, in the order errorType tests them.
var errorTypes = []struct {
	err  error
	name string
}{
	{context.DeadlineExceeded, "timeout"},
	{context.Canceled, "canceled"},
	{ErrPluginDown, "plugin_down"},
	{sidecar.ErrClosed, "plugin_down"},
	{sidecar.ErrFlowControl, "flow_control"},
}

// errorType is observe.CallOutcome.ErrorType of err: "" for nil, the
// code of a *protocol.Error, a name from errorTypes, "crash" for a
// *sidecar.CrashError, else "_OTHER".
func errorType(err error) string {
	if err == nil {
		return ""
	}
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return strconv.Itoa(pe.Code)
	}
	for _, t := range errorTypes {
		if errors.Is(err, t.err) {
			return t.name
		}
	}
	var ce *sidecar.CrashError
	if errors.As(err, &ce) {
		return "crash"
	}
	return "_OTHER"
}
