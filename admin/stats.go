package admin

// Stats supplies per-plugin call counters for the status answer. The kernel
// keeps none today: a host (or a later kernel observer) that counts calls
// implements Stats and sets Options.Stats, and each PluginStatus of
// GET /v1/status then carries its counters as "calls".
//
// PluginCalls is called once per plugin per status request, from the
// request's goroutine: it MUST be safe for concurrent use, MUST NOT block
// and MUST NOT call into the kernel (it runs while a status answer is
// built). It returns false when it has no counters for the plugin; the
// plugin's "calls" is then omitted.
type Stats interface {
	PluginCalls(plugin string) (CallStats, bool)
}

// CallStats are one plugin's call counters, as a Stats provider reports
// them.
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
