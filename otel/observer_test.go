package kernelotel

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
)

func newTestObserver(t *testing.T) (*Observer, *tracetest.SpanRecorder, *sdkmetric.ManualReader) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	o, err := NewObserver(Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)),
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return o, rec, reader
}

// TestCallSpans: a host dispatch's call is a child of the host's span, its
// traceparent is put on the context for the plugin, a relayed call takes
// the calling plugin's traceparent as its parent, and a failed call's span
// says so.
func TestCallSpans(t *testing.T) {
	o, rec, _ := newTestObserver(t)
	hostCtx, hostSpan := sdktrace.NewTracerProvider().Tracer("host").Start(context.Background(), "dispatch")
	ctx, end := o.Call(hostCtx, observe.CallInfo{Plugin: "redactor", Kind: "interceptor", Key: "tool.before", Generation: 3})
	span := trace.SpanFromContext(ctx).SpanContext()
	if tp := observe.Traceparent(ctx); tp != "00-"+span.TraceID().String()+"-"+span.SpanID().String()+"-01" {
		t.Errorf("traceparent on the call's context = %q, want the new span's", tp)
	}
	end(observe.CallOutcome{Duration: time.Millisecond})

	const pluginSpan = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	relayed := observe.WithTraceparent(context.Background(), pluginSpan)
	_, end = o.Call(relayed, observe.CallInfo{Plugin: "kvstore", Kind: "provider", Key: "plugin/kvstore/get", Caller: "memory", Generation: 3})
	end(observe.CallOutcome{Duration: 2 * time.Millisecond, Err: errors.New("plugin \"kvstore\": exited")})

	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans ended, want 2", len(spans))
	}
	first, second := spans[0], spans[1]
	if first.Name() != "interceptor redactor" || first.Parent().SpanID() != hostSpan.SpanContext().SpanID() ||
		first.SpanKind() != trace.SpanKindClient || first.Status().Code != codes.Unset {
		t.Errorf("host dispatch span: %q parent %v kind %v status %v", first.Name(), first.Parent().SpanID(), first.SpanKind(), first.Status())
	}
	if second.Name() != "provider kvstore" || second.Parent().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" ||
		second.Parent().SpanID().String() != "00f067aa0ba902b7" || !second.Parent().IsRemote() || second.Status().Code != codes.Error {
		t.Errorf("relayed span: %q parent %v status %v", second.Name(), second.Parent(), second.Status())
	}
	if !hasAttr(second.Attributes(), keyCaller.String("memory")) || !hasAttr(second.Attributes(), keyGeneration.Int64(3)) {
		t.Errorf("relayed span attributes %v lack the caller and generation", second.Attributes())
	}
}

func hasAttr(attrs []attribute.KeyValue, want attribute.KeyValue) bool {
	for _, a := range attrs {
		if a == want {
			return true
		}
	}
	return false
}

// TestDispatchSpan: a dispatch is a span, the parent of the calls made
// under its context, and a failed dispatch's span says so.
func TestDispatchSpan(t *testing.T) {
	o, rec, _ := newTestObserver(t)
	ctx, endDispatch := o.Dispatch(context.Background(), observe.DispatchInfo{Kind: "provider", Key: "plugin/kvstore/get"})
	_, endCall := o.Call(ctx, observe.CallInfo{Plugin: "kvstore", Kind: "provider", Key: "plugin/kvstore/get", Generation: 1})
	endCall(observe.CallOutcome{Duration: time.Millisecond})
	endDispatch(errors.New("plugin \"kvstore\": down"))
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans ended, want 2", len(spans))
	}
	call, dispatch := spans[0], spans[1]
	if dispatch.Name() != "dispatch provider" || dispatch.Status().Code != codes.Error || !hasAttr(dispatch.Attributes(), keyKey.String("plugin/kvstore/get")) {
		t.Errorf("dispatch span: %q status %v attrs %v", dispatch.Name(), dispatch.Status(), dispatch.Attributes())
	}
	if call.Parent().SpanID() != dispatch.SpanContext().SpanID() {
		t.Errorf("call span's parent %v is not the dispatch span %v", call.Parent().SpanID(), dispatch.SpanContext().SpanID())
	}
}

// TestMetrics: calls by outcome, in flight back to zero, durations, starts
// and a restart for a plugin started twice, and the usage counters.
func TestMetrics(t *testing.T) {
	o, _, reader := newTestObserver(t)
	info := observe.CallInfo{Plugin: "audit", Kind: "action", Key: "plugin/audit/show", Generation: 1}
	for _, err := range []error{nil, nil, errors.New("boom")} {
		_, end := o.Call(context.Background(), info)
		end(observe.CallOutcome{Duration: time.Millisecond, Err: err})
	}
	o.Start(observe.StartInfo{Plugin: "audit", Duration: 5 * time.Millisecond})
	o.Start(observe.StartInfo{Plugin: "audit", Duration: 6 * time.Millisecond, Err: errors.New("exited")})
	o.Start(observe.StartInfo{Plugin: "lazy", Duration: 4 * time.Millisecond, ActivatedBy: "call to provider plugin/lazy/x by host"})
	o.Start(observe.StartInfo{Plugin: "lazy", Duration: 4 * time.Millisecond, ActivatedBy: "call to provider plugin/lazy/x by host"})
	for _, key := range []string{"protocol/1.4", "calls", "calls"} {
		o.Use("audit", key)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out, _ := p.Attributes.Value(keyOutcome)
					got[m.Name+"/"+out.AsString()] += p.Value
					if cause, ok := p.Attributes.Value(keyCause); ok {
						got[m.Name+"/"+cause.AsString()] += p.Value
					}
					if use, ok := p.Attributes.Value(keyUse); ok {
						got[m.Name+"/"+use.AsString()] += p.Value
					}
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					got[m.Name] += int64(p.Count)
				}
			}
		}
	}
	want := map[string]int64{
		"extkernel.calls/ok": 2, "extkernel.calls/error": 1, "extkernel.calls.in_flight/": 0, "extkernel.call.duration": 3,
		"extkernel.plugin.starts/ready": 3, "extkernel.plugin.starts/failed": 1, "extkernel.plugin.restarts/": 1,
		"extkernel.plugin.starts/build": 2, "extkernel.plugin.starts/activation": 2, "extkernel.plugin.start.duration": 4,
		"extkernel.plugin.uses/calls": 2, "extkernel.plugin.uses/protocol/1.4": 1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
}

// Example wires the adapter into a kernel's config.
func Example() {
	obs, err := NewObserver(Options{}) // the global tracer and meter providers
	if err != nil {
		panic(err)
	}
	cfg := config.Config{Home: "/path/to/home", Observer: obs}
	_ = cfg // kernel.New(cfg), then Start: every plugin call is a span and counted
	// Output:
}
