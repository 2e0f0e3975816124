package kernel

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/extkernel/extkernel/kernel/observe"
)

// nopObserver is an Observer that does nothing: what a host pays for the
// hook itself.
type nopObserver struct{}

func (nopObserver) Call(ctx context.Context, _ observe.CallInfo) (context.Context, func(observe.CallOutcome)) {
	return ctx, nil
}
func (nopObserver) Dispatch(ctx context.Context, _ observe.DispatchInfo) (context.Context, func(error)) {
	return ctx, nil
}
func (nopObserver) Start(observe.StartInfo) {}

// BenchmarkObserve measures a dispatched call (an interceptor chain of one
// plugin) with the observer unset and set to a no-op, and, in the same
// run, what counting and observing one call costs on its own (counters:
// beginCall and end, as every dispatch runs them; counters+nop: with the
// no-op observer). The ratio of counters+nop to observer=nil is the share
// of a dispatched call the always-on counters and the observer take.
func BenchmarkObserve(b *testing.B) {
	plugs := []plug{{name: "one", intercepts: []string{"tool.before"},
		env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=continue"}}}
	payload := json.RawMessage(`{"tool":"bash","args":["ls","-l"]}`)
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		obs  observe.Observer
	}{{"observer=nil", nil}, {"observer=nop", nopObserver{}}} {
		b.Run(tt.name, func(b *testing.B) {
			cfg := testConfig(writeHome(b, plugs...))
			cfg.Observer = tt.obs
			k := benchKernel(b, cfg)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := k.Intercept(ctx, "tool.before", payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	info := observe.CallInfo{Plugin: "one", Kind: "interceptor", Key: "tool.before", Generation: 1}
	for _, tt := range []struct {
		name string
		obs  observe.Observer
	}{{"counters", nil}, {"counters+nop", nopObserver{}}} {
		b.Run(tt.name, func(b *testing.B) {
			var st callStats
			b.ReportAllocs()
			for b.Loop() {
				sp := beginCall(ctx, &st, tt.obs, info)
				sp.end(nil)
			}
		})
	}
}
