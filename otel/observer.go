package kernelotel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/kernel/observe"
)

// scope is the name of the instrumentation scope of every instrument and
// span; its version is the module's (scopeVersion) and its schema URL
// semconv.SchemaURL.
const scope = module

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
	uses                      metric.Int64Counter
	inFlight                  metric.Int64UpDownCounter
	callDuration, startDurate metric.Float64Histogram
	seen                      sync.Map // plugin name -> struct{}: started once
}

var _ observe.UsageObserver = (*Observer)(nil)

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
	version := scopeVersion()
	m := mp.Meter(scope, metric.WithInstrumentationVersion(version), metric.WithSchemaURL(semconv.SchemaURL))
	o := &Observer{tracer: tp.Tracer(scope, trace.WithInstrumentationVersion(version), trace.WithSchemaURL(semconv.SchemaURL))}
	var errs [7]error
	o.calls, errs[0] = m.Int64Counter("extkernel.calls", metric.WithUnit("{call}"),
		metric.WithDescription("Calls the kernel sent to plugins, and plugins' calls a host handler served, that ended."))
	o.inFlight, errs[1] = m.Int64UpDownCounter("extkernel.calls.in_flight", metric.WithUnit("{call}"),
		metric.WithDescription("Calls counted by extkernel.calls that have not ended."))
	o.callDuration, errs[2] = m.Float64Histogram("extkernel.call.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of the calls counted by extkernel.calls."),
		metric.WithExplicitBucketBoundaries(callBuckets...))
	o.starts, errs[3] = m.Int64Counter("extkernel.plugin.starts", metric.WithUnit("{start}"),
		metric.WithDescription("Plugin starts that ended, by cause: a build or a lazy member's activation."))
	o.restarts, errs[4] = m.Int64Counter("extkernel.plugin.restarts", metric.WithUnit("{restart}"),
		metric.WithDescription("Plugin starts after a plugin's first."))
	o.startDurate, errs[5] = m.Float64Histogram("extkernel.plugin.start.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of plugin starts, from spawn to the end of the handshake."),
		metric.WithExplicitBucketBoundaries(startBuckets...))
	o.uses, errs[6] = m.Int64Counter("extkernel.plugin.uses", metric.WithUnit("{use}"),
		metric.WithDescription("Uses of optional protocol features the host served, and handshakes by protocol minor, per plugin (the kernel's usage counters)."))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("kernelotel: create instrument: %w", err)
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
	ctx = o.callParent(ctx, info)
	attrs := callAttrs(info)
	kind := trace.SpanKindClient
	if info.Plugin == capability.HostProvider {
		kind = trace.SpanKindServer
	}
	ctx, span := o.tracer.Start(ctx, spanName(info), trace.WithSpanKind(kind),
		trace.WithAttributes(attrs...), trace.WithAttributes(keyKey.String(info.Key), keyGeneration.Int64(int64(info.Generation))))
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	ctx = observe.WithTraceparent(ctx, carrier["traceparent"])
	set := metric.WithAttributeSet(attribute.NewSet(attrs...))
	o.inFlight.Add(ctx, 1, set)
	return ctx, func(out observe.CallOutcome) {
		bg := context.Background()
		o.inFlight.Add(bg, -1, set)
		outcome := "ok"
		ended := attrs
		if out.Err != nil {
			outcome = "error"
			failed := errorAttrs(out)
			ended = append(failed, attrs...)
			span.SetAttributes(failed...)
			span.RecordError(out.Err)
			span.SetStatus(codes.Error, out.Err.Error())
		}
		o.calls.Add(bg, 1, metric.WithAttributeSet(attribute.NewSet(append(slices.Clip(ended), keyOutcome.String(outcome))...)))
		o.callDuration.Record(bg, out.Duration.Seconds(), metric.WithAttributeSet(attribute.NewSet(ended...)))
		span.End()
	}
}

// callParent returns ctx with the parent of the call's span: for a
// plugin's capability/call, the span of the calling plugin, from the
// traceparent it sent (even when ctx carries the span of the host's
// request the call serves: the plugin's span, if it started one, is a
// child of that one); for the host's dispatch, the span ctx carries, else
// the traceparent the host put on ctx.
func (o *Observer) callParent(ctx context.Context, info observe.CallInfo) context.Context {
	tp := observe.Traceparent(ctx)
	if tp == "" || (info.Caller == "" && trace.SpanContextFromContext(ctx).IsValid()) {
		return ctx
	}
	return traceContext.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
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

// Use counts one use of the usage key key by plugin (observe.UsageObserver):
// extkernel.plugin.uses with extkernel.plugin and extkernel.use.
func (o *Observer) Use(plugin, key string) {
	o.uses.Add(context.Background(), 1, metric.WithAttributes(keyPlugin.String(plugin), keyUse.String(key)))
}

// Start counts a plugin start, its duration, and a restart when the
// plugin was seen before.
func (o *Observer) Start(info observe.StartInfo) {
	ctx := context.Background()
	outcome := "ready"
	if info.Err != nil {
		outcome = "failed"
	}
	cause := "build"
	if info.ActivatedBy != "" {
		cause = "activation"
	}
	o.starts.Add(ctx, 1, metric.WithAttributes(keyPlugin.String(info.Plugin), keyOutcome.String(outcome), keyCause.String(cause)))
	o.startDurate.Record(ctx, info.Duration.Seconds(), metric.WithAttributes(keyPlugin.String(info.Plugin), keyCause.String(cause)))
	// A lazy member started again after an idle stop is activated, not
	// restarted.
	if _, again := o.seen.LoadOrStore(info.Plugin, struct{}{}); again && info.ActivatedBy == "" {
		o.restarts.Add(ctx, 1, metric.WithAttributes(keyPlugin.String(info.Plugin)))
	}
}
