package kernelotel

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/extkernel/extkernel/kernel/observe"
)

// scope is the instrumentation scope of every instrument and span.
const scope = "github.com/extkernel/extkernel/otel"

// Attribute keys.
const (
	keyPlugin     = attribute.Key("extkernel.plugin")
	keyKind       = attribute.Key("extkernel.kind")
	keyKey        = attribute.Key("extkernel.key")
	keyCaller     = attribute.Key("extkernel.caller")
	keyGeneration = attribute.Key("extkernel.generation")
	keyOutcome    = attribute.Key("extkernel.outcome")
)

// Options configure an Observer. The zero value uses the global providers
// (otel.GetTracerProvider, otel.GetMeterProvider).
type Options struct {
	// TracerProvider creates the tracer of the call spans; nil means the
	// global one.
	TracerProvider trace.TracerProvider
	// MeterProvider creates the meter of the metrics; nil means the
	// global one.
	MeterProvider metric.MeterProvider
}

// Observer is a observe.Observer recording OpenTelemetry metrics and
// traces (see the package doc). Create it with NewObserver.
type Observer struct {
	tracer                    trace.Tracer
	calls, starts, restarts   metric.Int64Counter
	inFlight                  metric.Int64UpDownCounter
	callDuration, startDurate metric.Float64Histogram
	seen                      sync.Map // plugin name -> struct{}: started once
}

var _ observe.Observer = (*Observer)(nil)

// NewObserver returns an Observer on the providers of opts. It fails only
// when the meter refuses to create an instrument.
func NewObserver(opts Options) (*Observer, error) {
	tp, mp := opts.TracerProvider, opts.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(scope)
	o := &Observer{tracer: tp.Tracer(scope)}
	var errs [6]error
	o.calls, errs[0] = m.Int64Counter("extkernel.calls", metric.WithDescription("Calls the kernel sent to plugins that ended."))
	o.inFlight, errs[1] = m.Int64UpDownCounter("extkernel.calls.in_flight", metric.WithDescription("Calls sent to plugins and not ended."))
	o.callDuration, errs[2] = m.Float64Histogram("extkernel.call.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of the calls the kernel sent to plugins."))
	o.starts, errs[3] = m.Int64Counter("extkernel.plugin.starts", metric.WithDescription("Plugin starts that ended."))
	o.restarts, errs[4] = m.Int64Counter("extkernel.plugin.restarts", metric.WithDescription("Plugin starts after a plugin's first."))
	o.startDurate, errs[5] = m.Float64Histogram("extkernel.plugin.start.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of plugin starts, from spawn to the end of the handshake."))
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("kernelotel: create instrument: %w", err)
		}
	}
	return o, nil
}

// traceContext is the W3C propagator of the traceparent kernel contexts
// carry.
var traceContext = propagation.TraceContext{}

// Call starts the call's span, counts it in flight, and returns the
// context carrying the span and its traceparent, and the function that
// ends both.
func (o *Observer) Call(ctx context.Context, info observe.CallInfo) (context.Context, func(observe.CallOutcome)) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		if tp := observe.Traceparent(ctx); tp != "" {
			// A call relayed from a plugin: its span, from the traceparent
			// it sent, is the parent.
			ctx = traceContext.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
		}
	}
	attrs := []attribute.KeyValue{keyPlugin.String(info.Plugin), keyKind.String(string(info.Kind)),
		keyKey.String(info.Key), keyGeneration.Int64(int64(info.Generation))}
	if info.Caller != "" {
		attrs = append(attrs, keyCaller.String(info.Caller))
	}
	ctx, span := o.tracer.Start(ctx, string(info.Kind)+" "+info.Plugin, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrs...))
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	ctx = observe.WithTraceparent(ctx, carrier["traceparent"])
	set := metric.WithAttributeSet(attribute.NewSet(keyPlugin.String(info.Plugin), keyKind.String(string(info.Kind))))
	o.inFlight.Add(ctx, 1, set)
	return ctx, func(out observe.CallOutcome) {
		o.inFlight.Add(context.Background(), -1, set)
		outcome := "ok"
		if out.Err != nil {
			outcome = "error"
			span.RecordError(out.Err)
			span.SetStatus(codes.Error, out.Err.Error())
		}
		o.calls.Add(context.Background(), 1, metric.WithAttributes(keyPlugin.String(info.Plugin),
			keyKind.String(string(info.Kind)), keyOutcome.String(outcome)))
		o.callDuration.Record(context.Background(), out.Duration.Seconds(), set)
		span.End()
	}
}

// Dispatch starts the span of a host's dispatch, the parent of the spans
// of the calls it sends to plugins.
func (o *Observer) Dispatch(ctx context.Context, info observe.DispatchInfo) (context.Context, func(error)) {
	ctx, span := o.tracer.Start(ctx, "dispatch "+string(info.Kind), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(keyKind.String(string(info.Kind)), keyKey.String(info.Key)))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// Start counts a plugin start, its duration, and a restart when the
// plugin was seen before.
func (o *Observer) Start(info observe.StartInfo) {
	ctx := context.Background()
	outcome := "ready"
	if info.Err != nil {
		outcome = "failed"
	}
	o.starts.Add(ctx, 1, metric.WithAttributes(keyPlugin.String(info.Plugin), keyOutcome.String(outcome)))
	o.startDurate.Record(ctx, info.Duration.Seconds(), metric.WithAttributes(keyPlugin.String(info.Plugin)))
	if _, again := o.seen.LoadOrStore(info.Plugin, struct{}{}); again {
		o.restarts.Add(ctx, 1, metric.WithAttributes(keyPlugin.String(info.Plugin)))
	}
}
