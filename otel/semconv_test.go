package kernelotel

import (
	"context"
	"errors"
	"maps"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
)

// collect reads every metric the reader holds, by name, checking that all
// come from this module's scope.
func collect(t *testing.T, o *Observer, reader interface {
	Collect(context.Context, *metricdata.ResourceMetrics) error
}) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	byName := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		want := instrumentation.Scope{Name: scope, Version: scopeVersion(), SchemaURL: semconv.SchemaURL}
		if sm.Scope != want {
			t.Errorf("metrics scope = %+v, want %+v", sm.Scope, want)
		}
		for _, m := range sm.Metrics {
			byName[m.Name] = m
		}
	}
	return byName
}

// TestHistogramBuckets: call durations from 30 µs to 3 s land in as many
// buckets of explicit boundaries in seconds (with the SDK's defaults,
// meant for milliseconds, all of them fell in (0, 5]); plugin starts too.
func TestHistogramBuckets(t *testing.T) {
	o, _, reader := newTestObserver(t)
	info := observe.CallInfo{Plugin: "kvstore", Kind: "provider", Key: "plugin/kvstore/get", Generation: 1}
	durations := []time.Duration{30 * time.Microsecond, 300 * time.Microsecond, 3 * time.Millisecond,
		30 * time.Millisecond, 300 * time.Millisecond, 3 * time.Second}
	for _, d := range durations {
		_, end := o.Call(context.Background(), info)
		end(observe.CallOutcome{Duration: d})
	}
	for _, d := range []time.Duration{3 * time.Millisecond, 40 * time.Millisecond, 2 * time.Second} {
		o.Start(observe.StartInfo{Plugin: "kvstore", Duration: d})
	}
	metrics := collect(t, o, reader)
	for _, tt := range []struct {
		name    string
		bounds  []float64
		samples int
	}{
		{"extkernel.call.duration", callBuckets, len(durations)},
		{"extkernel.plugin.start.duration", startBuckets, 3},
	} {
		m := metrics[tt.name]
		h, ok := m.Data.(metricdata.Histogram[float64])
		if !ok || len(h.DataPoints) != 1 {
			t.Errorf("%s: %T with %d points, want one float64 histogram point", tt.name, m.Data, len(h.DataPoints))
			continue
		}
		p := h.DataPoints[0]
		if m.Unit != "s" || !slices.Equal(p.Bounds, tt.bounds) {
			t.Errorf("%s: unit %q bounds %v, want s and %v", tt.name, m.Unit, p.Bounds, tt.bounds)
		}
		used := 0
		for _, n := range p.BucketCounts {
			if n > 0 {
				used++
			}
			if n > 1 {
				t.Errorf("%s: bucket counts %v: two samples in one bucket", tt.name, p.BucketCounts)
			}
		}
		if used != tt.samples || p.Count != uint64(tt.samples) {
			t.Errorf("%s: %d samples in %d buckets (%v), want %d in as many", tt.name, p.Count, used, p.BucketCounts, tt.samples)
		}
	}
}

// TestUnits: every instrument has a UCUM unit, counters in {...}
// annotations.
func TestUnits(t *testing.T) {
	o, _, reader := newTestObserver(t)
	_, end := o.Call(context.Background(), observe.CallInfo{Plugin: "audit", Kind: "action", Key: "plugin/audit/show", Generation: 1})
	end(observe.CallOutcome{Duration: time.Millisecond})
	o.Start(observe.StartInfo{Plugin: "audit", Duration: time.Millisecond})
	o.Start(observe.StartInfo{Plugin: "audit", Duration: time.Millisecond})
	got := map[string]string{}
	for name, m := range collect(t, o, reader) {
		got[name] = m.Unit
	}
	want := map[string]string{
		"extkernel.calls": "{call}", "extkernel.calls.in_flight": "{call}", "extkernel.call.duration": "s",
		"extkernel.plugin.starts": "{start}", "extkernel.plugin.restarts": "{restart}", "extkernel.plugin.start.duration": "s",
	}
	if !maps.Equal(got, want) {
		t.Errorf("units = %v\nwant    %v", got, want)
	}
}

// TestSemanticAttributes: each shape of call carries rpc.system,
// rpc.service and rpc.method on its span and its duration, and a failed
// one error.type and, for an error answer, rpc.jsonrpc.error_code.
func TestSemanticAttributes(t *testing.T) {
	refused := &protocol.Error{Code: protocol.CodeNotAvailable, Message: "not running"}
	tests := []struct {
		name     string
		info     observe.CallInfo
		out      observe.CallOutcome
		span     string
		kind     trace.SpanKind
		want     []attribute.KeyValue // on the span and the duration
		notThere []attribute.Key
	}{
		{
			name: "host dispatch",
			info: observe.CallInfo{Plugin: "redactor", Kind: "interceptor", Key: "tool.before", Generation: 2},
			out:  observe.CallOutcome{Duration: time.Millisecond},
			span: "interceptor redactor", kind: trace.SpanKindClient,
			want: []attribute.KeyValue{rpcSystem, semconv.RPCService("redactor"), semconv.RPCMethod("tool.before"),
				keyPlugin.String("redactor"), keyKind.String("interceptor")},
			notThere: []attribute.Key{semconv.ErrorTypeKey, semconv.RPCJSONRPCErrorCodeKey, keyCaller},
		},
		{
			name: "plugin to plugin, error answer",
			info: observe.CallInfo{Plugin: "kvstore", Kind: "provider", Key: "plugin/kvstore/run", Caller: "memory",
				Capability: "storage.kv", Method: "get", Generation: 2},
			out:  observe.CallOutcome{Duration: time.Millisecond, Err: refused, ErrorType: "-32006"},
			span: "provider kvstore", kind: trace.SpanKindClient,
			want: []attribute.KeyValue{rpcSystem, semconv.RPCService("storage.kv"), semconv.RPCMethod("get"),
				keyPlugin.String("kvstore"), keyCaller.String("memory"), semconv.ErrorTypeKey.String("-32006"),
				semconv.RPCJSONRPCErrorCode(-32006)},
		},
		{
			name: "plugin to host, timeout",
			info: observe.CallInfo{Plugin: "(host)", Caller: "memory", Capability: "host.log", Method: "write", Generation: 2},
			out:  observe.CallOutcome{Duration: time.Millisecond, Err: context.DeadlineExceeded, ErrorType: "timeout"},
			span: "host.log/write", kind: trace.SpanKindServer,
			want: []attribute.KeyValue{rpcSystem, semconv.RPCService("host.log"), semconv.RPCMethod("write"),
				keyPlugin.String("(host)"), keyCaller.String("memory"), semconv.ErrorTypeKey.String("timeout")},
			notThere: []attribute.Key{semconv.RPCJSONRPCErrorCodeKey, keyKind},
		},
		{
			name: "unnamed failure",
			info: observe.CallInfo{Plugin: "audit", Kind: "action", Key: "plugin/audit/show", Generation: 2},
			out:  observe.CallOutcome{Duration: time.Millisecond, Err: errors.New("boom")},
			span: "action audit", kind: trace.SpanKindClient,
			want: []attribute.KeyValue{rpcSystem, semconv.RPCService("audit"), semconv.RPCMethod("plugin/audit/show"),
				semconv.ErrorTypeOther},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, rec, reader := newTestObserver(t)
			_, end := o.Call(context.Background(), tt.info)
			end(tt.out)
			spans := rec.Ended()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			}
			s := spans[0]
			if s.Name() != tt.span || s.SpanKind() != tt.kind {
				t.Errorf("span %q kind %v, want %q %v", s.Name(), s.SpanKind(), tt.span, tt.kind)
			}
			if s.InstrumentationScope() != (instrumentation.Scope{Name: scope, Version: scopeVersion(), SchemaURL: semconv.SchemaURL}) {
				t.Errorf("span scope = %+v", s.InstrumentationScope())
			}
			h := collect(t, o, reader)["extkernel.call.duration"].Data.(metricdata.Histogram[float64])
			sets := map[string]attribute.Set{"span": attribute.NewSet(s.Attributes()...), "duration": h.DataPoints[0].Attributes}
			for where, set := range sets {
				for _, kv := range tt.want {
					if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
						t.Errorf("%s: %s = %v (%v), want %v", where, kv.Key, v.Emit(), ok, kv.Value.Emit())
					}
				}
				for _, k := range tt.notThere {
					if v, ok := set.Value(k); ok {
						t.Errorf("%s: %s = %v, want none", where, k, v.Emit())
					}
				}
			}
		})
	}
}

// TestPluginSpanIsParent: the span of a plugin's call is a child of the
// span whose traceparent the plugin sent, even when the call's context
// carries the span of the host's request it serves (the plugin's span, a
// child of that one, is the closer parent).
func TestPluginSpanIsParent(t *testing.T) {
	o, rec, _ := newTestObserver(t)
	request, endRequest := o.Call(context.Background(), observe.CallInfo{Plugin: "memory", Kind: "provider", Key: "plugin/memory/run", Generation: 1})
	const pluginSpan = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	_, end := o.Call(observe.WithTraceparent(request, pluginSpan),
		observe.CallInfo{Plugin: "(host)", Caller: "memory", Capability: "host.log", Method: "write", Generation: 1})
	end(observe.CallOutcome{})
	endRequest(observe.CallOutcome{})
	s := rec.Ended()[0]
	if s.Parent().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("host call's parent = %v, want the plugin's span", s.Parent())
	}
}

// TestModuleVersion: the scope's version is this module's as the build
// information of the binary records it.
func TestModuleVersion(t *testing.T) {
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "(devel)"},
		{"main module", &debug.BuildInfo{Main: debug.Module{Path: module, Version: "v1.2.0"}}, "v1.2.0"},
		{"dependency", &debug.BuildInfo{Main: debug.Module{Path: "example.com/host"},
			Deps: []*debug.Module{{Path: "github.com/extkernel/extkernel", Version: "v1.0.0"}, {Path: module, Version: "v0.3.1"}}}, "v0.3.1"},
		{"replaced by a version", &debug.BuildInfo{Main: debug.Module{Path: "example.com/host"},
			Deps: []*debug.Module{{Path: module, Version: "v0.3.1", Replace: &debug.Module{Path: "example.com/fork", Version: "v0.3.2"}}}}, "v0.3.2"},
		{"replaced by a directory", &debug.BuildInfo{Main: debug.Module{Path: "example.com/host"},
			Deps: []*debug.Module{{Path: module, Version: "v0.3.1", Replace: &debug.Module{Path: "../otel"}}}}, "(devel)"},
		{"absent", &debug.BuildInfo{Main: debug.Module{Path: "example.com/host"}}, "(devel)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := moduleVersion(tt.bi); got != tt.want {
				t.Errorf("moduleVersion = %q, want %q", got, tt.want)
			}
		})
	}
}
