package admin

import (
	"time"

	"github.com/extkernel/extkernel/kernel/observe"
)

// CallStats are one plugin's call counters in the status answer: the
// kernel's always-on counters (observe.PluginStatus.Calls).
type CallStats struct {
	// Calls counts the calls dispatched to the plugin.
	Calls uint64 `json:"calls"`
	// Errors counts those that failed.
	Errors uint64 `json:"errors"`
	// InFlight is how many are running now.
	InFlight int64 `json:"in_flight"`
	// Latency holds latency percentiles, omitted when there are none.
	Latency *Latency `json:"latency,omitempty"`
}

// Latency holds call latency percentiles, in milliseconds.
type Latency struct {
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
}

// callStats converts the kernel's counters; Latency is omitted until a
// call ended.
func callStats(c observe.CallStats) *CallStats {
	out := &CallStats{Calls: c.Calls, Errors: c.Errors, InFlight: c.InFlight}
	if c.Calls > 0 {
		out.Latency = &Latency{P50: millis(c.P50), P90: millis(c.P90), P99: millis(c.P99)}
	}
	return out
}

// millis is d in milliseconds.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
