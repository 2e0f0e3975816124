package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

func TestLatencyBucket(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int
	}{
		{-time.Second, 0}, {0, 0}, {15 * time.Microsecond, 0}, {16 * time.Microsecond, 1},
		{31 * time.Microsecond, 1}, {32 * time.Microsecond, 2}, {time.Millisecond, 6}, {1025 * time.Microsecond, 7},
		{time.Hour, latencyBuckets - 1},
	}
	for _, tt := range tests {
		if got := bucket(tt.d); got != tt.want {
			t.Errorf("bucket(%v) = %d, want %d", tt.d, got, tt.want)
		}
		if tt.want < latencyBuckets-1 && tt.d >= 0 && tt.d >= latencyBase<<tt.want {
			t.Errorf("bucket %d's bound %v is not above %v", tt.want, latencyBase<<tt.want, tt.d)
		}
	}
}

func TestCallStatsSnapshot(t *testing.T) {
	var st callStats
	if got := st.snapshot(); got != (observe.CallStats{}) {
		t.Errorf("empty snapshot = %+v", got)
	}
	// 98 fast calls, one at 1ms, one failing at 1s.
	for range 98 {
		st.latency[bucket(20*time.Microsecond)].Add(1)
	}
	st.latency[bucket(time.Millisecond)].Add(1)
	st.latency[bucket(time.Second)].Add(1)
	st.calls.Store(100)
	st.errors.Store(1)
	st.inFlight.Store(2)
	got := st.snapshot()
	want := observe.CallStats{Calls: 100, Errors: 1, InFlight: 2, P50: 32 * time.Microsecond, P90: 32 * time.Microsecond, P99: 1024 * time.Microsecond}
	if got != want {
		t.Errorf("snapshot = %+v\nwant       %+v", got, want)
	}
}

// recordingObserver records what the kernel tells it.
type recordingObserver struct {
	mu         sync.Mutex
	calls      []string
	starts     []string
	dispatches []string
}

type dispatchMark struct{}

func (o *recordingObserver) Dispatch(ctx context.Context, info observe.DispatchInfo) (context.Context, func(error)) {
	return context.WithValue(ctx, dispatchMark{}, info.Key), func(err error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		res := "ok"
		if err != nil {
			res = "error"
		}
		o.dispatches = append(o.dispatches, string(info.Kind)+" "+info.Key+" "+res)
	}
}

type ctxMark struct{}

func (o *recordingObserver) Call(ctx context.Context, info observe.CallInfo) (context.Context, func(observe.CallOutcome)) {
	inDispatch := ctx.Value(dispatchMark{}) != nil
	return context.WithValue(ctx, ctxMark{}, info.Key), func(out observe.CallOutcome) {
		o.mu.Lock()
		defer o.mu.Unlock()
		res := "ok"
		if out.Err != nil {
			res = "error"
		}
		if !inDispatch {
			res += " outside any dispatch"
		}
		o.calls = append(o.calls, string(info.Kind)+" "+info.Plugin+" "+info.Key+" "+res)
	}
}

func (o *recordingObserver) Start(info observe.StartInfo) {
	o.mu.Lock()
	defer o.mu.Unlock()
	res := "ready"
	if info.Err != nil {
		res = "failed"
	}
	o.starts = append(o.starts, info.Plugin+" "+res)
}

// TestObserverAndCounters dispatches to real plugins and checks that the
// observer hears of every start and call, with its outcome, and that the
// counters of Plugins() agree.
func TestObserverAndCounters(t *testing.T) {
	obs := &recordingObserver{}
	cfg := testConfig(writeHome(t,
		plug{name: "good", intercepts: []string{"tool.before"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=continue"}},
		plug{name: "bad", intercepts: []string{"tool.before"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=fail"}},
	))
	cfg.Observer = obs
	k := startKernel(t, cfg)
	for range 3 {
		if _, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	obs.mu.Lock()
	slices.Sort(obs.starts)
	if want := []string{"bad ready", "good ready"}; !slices.Equal(obs.starts, want) {
		t.Errorf("starts = %q, want %q", obs.starts, want)
	}
	slices.Sort(obs.calls)
	want := []string{"interceptor bad tool.before error", "interceptor bad tool.before error", "interceptor bad tool.before error",
		"interceptor good tool.before ok", "interceptor good tool.before ok", "interceptor good tool.before ok"}
	if !slices.Equal(obs.calls, want) {
		t.Errorf("calls = %q\nwant %q", obs.calls, want)
	}
	if want := []string{"interceptor tool.before ok", "interceptor tool.before ok", "interceptor tool.before ok"}; !slices.Equal(obs.dispatches, want) {
		t.Errorf("dispatches = %q, want %q", obs.dispatches, want)
	}
	obs.mu.Unlock()
	for _, p := range k.Plugins() {
		wantErr := uint64(0)
		if p.Name == "bad" {
			wantErr = 3
		}
		if p.Calls.Calls != 3 || p.Calls.Errors != wantErr || p.Calls.InFlight != 0 || p.Calls.P50 == 0 {
			t.Errorf("%s: calls %+v, want 3 calls, %d errors, none in flight, a p50", p.Name, p.Calls, wantErr)
		}
	}
}

// TestObserverContextReachesCall checks that the context the observer
// returns is the one the call is made with (an adapter's span rides on it).
func TestObserverContextReachesCall(t *testing.T) {
	var st callStats
	sp := beginCall(context.Background(), &st, &recordingObserver{}, observe.CallInfo{Key: "k"})
	if got := sp.ctx.Value(ctxMark{}); got != "k" {
		t.Errorf("call context carries %v, want the observer's", got)
	}
	sp.end(errors.New("x"))
	if got := st.snapshot(); got.Calls != 1 || got.Errors != 1 || got.InFlight != 0 {
		t.Errorf("counters = %+v", got)
	}
}

// tracingObserver gives every call the same traceparent, as an adapter
// that starts a span would.
type tracingObserver struct{ nopObserver }

const testSpan = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func (tracingObserver) Call(ctx context.Context, _ observe.CallInfo) (context.Context, func(observe.CallOutcome)) {
	return observe.WithTraceparent(ctx, testSpan), nil
}

// TestTraceparentCrossesProcesses: the traceparent the observer puts on a
// call reaches the plugin in its request, and the plugin's call carries it
// back to the host handler (and to the observer of the relayed call).
func TestTraceparentCrossesProcesses(t *testing.T) {
	memory := callerPlug("memory", nil, "host.log ^1.0")
	cfg := callConfig(writeHome(t, memory))
	cfg.Observer = tracingObserver{}
	seen := make(chan string, 1)
	cfg.Handlers["host.log"] = func(ctx context.Context, _ *capability.Call) (json.RawMessage, error) {
		seen <- observe.Traceparent(ctx)
		return json.RawMessage(`true`), nil
	}
	k := startKernel(t, cfg)
	out, err := k.CallProvider(context.Background(), "plugin/memory/run", json.RawMessage(`{"echo": 1}`))
	if err != nil || string(out) != `{"echo":1,"traceparent":"`+testSpan+`"}` {
		t.Errorf("echo = %s, %v; want the traceparent the plugin received", out, err)
	}
	if o := runCaller(t, context.Background(), k, "memory", callScript("host.log", "write", "", true)); string(o.Output) != "true" {
		t.Fatalf("call: %v", o)
	}
	if got := <-seen; got != testSpan {
		t.Errorf("host handler saw traceparent %q, want %q", got, testSpan)
	}
}

// infoObserver records the CallInfo of every call a plugin made (Caller
// set), and marks the context it returns with the call's capability.
type infoObserver struct {
	nopObserver
	mu    sync.Mutex
	calls []observe.CallInfo
}

func (o *infoObserver) Call(ctx context.Context, info observe.CallInfo) (context.Context, func(observe.CallOutcome)) {
	if info.Caller == "" {
		return ctx, nil
	}
	return context.WithValue(ctx, ctxMark{}, info.Capability), func(observe.CallOutcome) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.calls = append(o.calls, info)
	}
}

// TestObserverSeesPluginCalls: a plugin's capability/call is reported to
// the observer whether a host handler serves it (Plugin "(host)", the
// handler running under the observer's context, counted in no plugin's
// stats) or another plugin's provider does, with the capability and
// method the plugin called.
func TestObserverSeesPluginCalls(t *testing.T) {
	memory := callerPlug("memory", nil, "storage.kv ^1.0", "host.log ^1.0")
	kvstore := callerPlug("kvstore", []string{"storage.kv@1.2.0"})
	cfg := callConfig(writeHome(t, memory, kvstore))
	obs := &infoObserver{}
	cfg.Observer = obs
	marked := make(chan any, 1)
	cfg.Handlers["host.log"] = func(ctx context.Context, _ *capability.Call) (json.RawMessage, error) {
		marked <- ctx.Value(ctxMark{})
		return json.RawMessage(`true`), nil
	}
	k := startKernel(t, cfg)
	if o := runCaller(t, context.Background(), k, "memory", callScript("host.log", "write", "", true)); string(o.Output) != "true" {
		t.Fatalf("host call: %v", o)
	}
	if got := <-marked; got != "host.log" {
		t.Errorf("host handler's context carries %v, want the observer's (host.log)", got)
	}
	if o := runCaller(t, context.Background(), k, "memory", callScript("storage.kv", "get", `{"echo":1}`, true)); string(o.Output) != `{"echo":1}` {
		t.Fatalf("plugin call: %v", o)
	}
	obs.mu.Lock()
	got := obs.calls
	obs.mu.Unlock()
	want := []observe.CallInfo{
		{Plugin: capability.HostProvider, Caller: "memory", Capability: "host.log", Method: "write", Generation: 1},
		{Plugin: "kvstore", Kind: "provider", Key: "plugin/kvstore/run", Caller: "memory", Capability: "storage.kv", Method: "get", Generation: 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("observed plugin calls:\n%+v\nwant\n%+v", got, want)
	}
	calls := map[string]uint64{}
	for _, p := range k.Plugins() {
		calls[p.Name] = p.Calls.Calls
	}
	if want := map[string]uint64{"memory": 2, "kvstore": 1}; !maps.Equal(calls, want) {
		t.Errorf("calls counted = %v, want %v (the host's handler counted in no plugin's)", calls, want)
	}
}

// TestErrorType: every failure class an observer can be told, and the
// order that decides a wrapped one.
func TestErrorType(t *testing.T) {
	crash := &sidecar.CrashError{Plugin: "kv", ExitStatus: "exit status 2"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"error answer", &protocol.Error{Code: -32000, Message: "no"}, "-32000"},
		{"wrapped refusal", fmt.Errorf("call: %w", &protocol.Error{Code: protocol.CodeNotAvailable}), "-32006"},
		{"deadline", fmt.Errorf("call: %w", context.DeadlineExceeded), "timeout"},
		{"canceled", context.Canceled, "canceled"},
		{"down", ErrPluginDown, "plugin_down"},
		{"down after a crash", fmt.Errorf("%w: %w", ErrPluginDown, crash), "plugin_down"},
		{"stopping", sidecar.ErrClosed, "plugin_down"},
		{"crash", crash, "crash"},
		{"flow control", fmt.Errorf("%w: chunk 3", sidecar.ErrFlowControl), "flow_control"},
		{"other", errors.New("boom"), "_OTHER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errorType(tt.err); got != tt.want {
				t.Errorf("errorType(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}
