package kernel

import (
	"context"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/extkernel/extkernel/contribution"
)

// Observer is told about every call the kernel sends to a plugin and every
// plugin start (Config.Observer). The kernel calls it from the goroutine
// making the call or the start, with no lock held; it must return quickly
// and must not block. A nil Observer costs a dispatch nothing; package
// docs/architecture.md ("Observing a kernel") says what a no-op one costs.
// The OpenTelemetry adapter (module github.com/extkernel/extkernel/otel)
// is one.
type Observer interface {
	// Call is called when the kernel is about to send a call, with the
	// call's context. The context it returns is the one the call is made
	// with (an adapter returns ctx with a span, say); end is called once,
	// when the call has ended, with its outcome. end may be nil.
	Call(ctx context.Context, info CallInfo) (_ context.Context, end func(CallOutcome))
	// Dispatch is called when a host's dispatch begins (Intercept,
	// Strategy, CallProvider, RunAction, StreamProvider, Invoke,
	// InvokeEach), with its context; the calls it sends to plugins are
	// made under the context it returns (an adapter's dispatch span is the
	// parent of their spans). end, which may be nil, is called once with
	// the dispatch's error when it returns (for StreamProvider, when the
	// stream ends).
	Dispatch(ctx context.Context, info DispatchInfo) (_ context.Context, end func(error))
	// Start is called when a plugin start has ended, ready or failed: in
	// a generation build, or a supervised restart.
	Start(info StartInfo)
}

// DispatchInfo describes a host's dispatch: the contribution kind and the
// key it names (a point, a slot, a provider or action ID, a custom kind's
// key).
type DispatchInfo struct {
	Kind contribution.Kind
	Key  string
}

// dispatching tells the observer, if any, that a dispatch of kind at key
// begins; it returns the dispatch's context and the function to call with
// its error, nil (and ctx) without an observer or when the observer gives
// none.
func (k *Kernel) dispatching(ctx context.Context, kind contribution.Kind, key string) (context.Context, func(error)) {
	obs := k.config().Observer
	if obs == nil {
		return ctx, nil
	}
	c, end := obs.Dispatch(ctx, DispatchInfo{Kind: kind, Key: key})
	if c == nil {
		c = ctx
	}
	return c, end
}

// CallInfo describes a call the kernel sends to a plugin.
type CallInfo struct {
	// Plugin is the plugin called.
	Plugin string
	// Kind and Key name the contribution called: an interceptor at a
	// point, the owner of a strategy slot, a provider or an action by its
	// namespaced ID.
	Kind contribution.Kind
	Key  string
	// Caller is the plugin whose capability/call the kernel relays (the
	// call then goes to a provider of another plugin), or empty for the
	// host's own dispatch.
	Caller string
	// Generation is the number of the generation the call is served by.
	Generation uint64
}

// CallOutcome is how a call ended.
type CallOutcome struct {
	// Duration is the time from the call's start to its end.
	Duration time.Duration
	// Err is nil for a result, else the error the dispatch method returns
	// for this plugin (a plugin's error answer, its crash, a deadline).
	Err error
}

// StartInfo describes a plugin start that ended. A plugin that was not
// launched, because a plugin it depends on failed or the startup budget
// ran out, is reported failed with a zero Duration.
type StartInfo struct {
	// Plugin is the plugin started.
	Plugin string
	// Duration is the time from spawn to the end of its handshake (or its
	// failure).
	Duration time.Duration
	// Err is nil when the plugin became ready.
	Err error
}

// CallStats are a plugin's call counters (PluginStatus.Calls): always on,
// counted for every call the kernel sends to it (the host's dispatch and
// the calls it relays from other plugins) since the kernel started,
// across reloads and restarts.
type CallStats struct {
	// Calls counts the calls that ended; Errors those of them that failed.
	Calls, Errors uint64
	// InFlight is the number of calls sent and not ended.
	InFlight int64
	// P50, P90 and P99 are latency percentiles over every call that
	// ended, as the upper bounds of the histogram buckets they fall in
	// (powers of two from 16µs up to about 9 minutes), so within a factor
	// of two above the true value. Zero when no call ended.
	P50, P90, P99 time.Duration
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
func (s *callStats) snapshot() CallStats {
	out := CallStats{Calls: s.calls.Load(), Errors: s.errors.Load(), InFlight: s.inFlight.Load()}
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
	done  func(CallOutcome)
}

// beginCall starts counting a call to a plugin whose counters are st, and
// tells the observer obs (nil for none). The caller makes the call with
// the returned span's ctx and then calls end, once.
func beginCall(ctx context.Context, st *callStats, obs Observer, info CallInfo) callSpan {
	sp := callSpan{ctx: ctx, st: st, start: time.Now()}
	st.inFlight.Add(1)
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
	sp.st.inFlight.Add(-1)
	sp.st.calls.Add(1)
	if err != nil {
		sp.st.errors.Add(1)
	}
	sp.st.latency[bucket(d)].Add(1)
	if sp.done != nil {
		sp.done(CallOutcome{Duration: d, Err: err})
	}
}
