package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/internal/benchkit"
)

// loopChunk is how many calls one provider invocation of the calling
// plugin makes and times: its answer, the durations, stays far below the
// frame limit.
const loopChunk = 1000

// BenchmarkPluginCall measures calls a plugin makes through the kernel
// (capability/call, issue 13), side by side with their floor in the same
// run; each reports the median and 99th percentile of one call's duration
// (p50-ns, p99-ns), the host's allocations and the calling plugin's CPU
// time per call:
//
//   - floor: one host-to-plugin round trip: CallProvider on the Go
//     polyglot plugin go-a, timed by the host, as
//     sidecar's BenchmarkRoundTrip times its round trips;
//   - host-handler: go-a calls host.log, served by a Go handler of the
//     host that answers its input: one plugin-to-host round trip, timed
//     by go-a around each sdk.Plugin.Call (target: p50 within 1.2x the
//     floor's);
//   - plugin-provider: go-a calls poly.go-b, which the Go polyglot plugin
//     go-b provides: go-a to the kernel, the kernel to go-b and back, two
//     hops, timed by go-a (target: p50 within 2.3x the floor's).
//
// Every call carries the same small input, {"echo":"x"}, and is answered
// with a small object. The plugin-timed variants make their calls in
// chunks of loopChunk from one provider invocation each, naming it as
// their parent, as a handler needing data does.
func BenchmarkPluginCall(b *testing.B) {
	home := writeHome(b,
		plug{name: "go-a", bin: goPolyglot(b), requires: []string{"host.log ^1.0", "poly.go-b ^1.0"}},
		plug{name: "go-b", bin: goPolyglot(b), provides: []string{"poly.go-b@1.0.0"},
			env: map[string]string{"POLYGLOT_PROVIDES": "poly.go-b@1.0.0"}, methods: map[string]map[string]string{"poly.go-b": {"run": "run"}}},
	)
	cfg := testConfig(home)
	cfg.Handlers = map[capability.Key]capability.Handler{"host.log": func(_ context.Context, c *capability.Call) (json.RawMessage, error) {
		return c.Input, nil
	}}
	k := benchKernel(b, cfg)
	pid := pluginPID(b, k, "go-a")
	ctx := context.Background()
	input := `{"echo":"x"}`
	b.Run("floor", func(b *testing.B) {
		script := json.RawMessage(input)
		benchkit.RoundTrip(b, pid, func() error {
			_, err := k.CallProvider(ctx, "plugin/go-a/run", script)
			return err
		})
	})
	b.Run("host-handler", func(b *testing.B) {
		pluginTimed(b, k, pid, "go-a", fmt.Sprintf(`"call":{"capability":"host.log","method":"write","input":%s}`, input))
	})
	b.Run("plugin-provider", func(b *testing.B) {
		pluginTimed(b, k, pid, "go-a", fmt.Sprintf(`"call":{"capability":"poly.go-b","method":"run","input":%s}`, input))
	})
}

// pluginTimed runs b.N calls that plugin (pid) makes and times itself, as
// its polyglot script call (the members of a script object, without
// braces) in loops of at most loopChunk, after 100 untimed warm-up calls,
// and reports what benchkit.RoundTrip reports for host-timed calls.
func pluginTimed(b *testing.B, k *Kernel, pid int, plugin, call string) {
	ctx := context.Background()
	loop := func(n int) ([]int64, error) {
		out, err := k.CallProvider(ctx, "plugin/"+plugin+"/run", json.RawMessage(fmt.Sprintf(`{"loop":%d,%s}`, n, call)))
		if err != nil {
			return nil, err
		}
		var res struct {
			NS []int64 `json:"ns"`
		}
		if err := json.Unmarshal(out, &res); err != nil || len(res.NS) != n {
			return nil, fmt.Errorf("loop of %d answered %.200s: %v", n, out, err)
		}
		return res.NS, nil
	}
	if _, err := loop(100); err != nil {
		b.Fatal(err)
	}
	lat := benchkit.NewLatencies(b.N)
	cpu := benchkit.PluginCPU(b, pid)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(loopChunk, b.N-done)
		ns, err := loop(n)
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range ns {
			lat.Add(time.Duration(d))
		}
		done += n
	}
	b.StopTimer()
	lat.Report(b)
	cpu()
}

// pluginPID returns the PID of plugin's running sidecar.
func pluginPID(b *testing.B, k *Kernel, plugin string) int {
	for _, st := range k.Plugins() {
		if st.Name == plugin && st.PID != 0 {
			return st.PID
		}
	}
	b.Fatalf("plugin %q is not running", plugin)
	return 0
}
