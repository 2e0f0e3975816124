package wire

import "context"

// traceparentKey carries a call's W3C traceparent in a context.
type traceparentKey struct{}

// WithTraceparent returns ctx carrying tp, or ctx itself when tp is not a
// valid version-00 traceparent (ValidTraceparent): a value that came from
// a plugin is checked before anything uses it.
func WithTraceparent(ctx context.Context, tp string) context.Context {
	if !ValidTraceparent(tp) {
		return ctx
	}
	return context.WithValue(ctx, traceparentKey{}, tp)
}

// Traceparent returns the traceparent ctx carries, or "".
func Traceparent(ctx context.Context) string {
	tp, _ := ctx.Value(traceparentKey{}).(string)
	return tp
}

// ValidTraceparent reports whether tp is a W3C Trace Context traceparent
// of version 00: "00-", 32 lower-case hex digits (the trace id, not all
// zeros), "-", 16 (the parent span id, not all zeros), "-", 2 (the flags).
func ValidTraceparent(tp string) bool {
	if len(tp) != 55 || tp[:3] != "00-" || tp[35] != '-' || tp[52] != '-' {
		return false
	}
	trace, span, flags := tp[3:35], tp[36:52], tp[53:]
	return isHex(trace) && !allZeros(trace) && isHex(span) && !allZeros(span) && isHex(flags)
}

// isHex reports whether s holds lower-case hex digits only.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// allZeros reports whether s holds '0's only.
func allZeros(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}

// SetTraceparent returns params, the params of a host request (intercept,
// strategy/invoke, provider/invoke, action/run, contribution/invoke),
// carrying tp as its traceparent; "" leaves none. Params of any other type
// are returned as they are.
func SetTraceparent(params any, tp string) any {
	switch p := params.(type) {
	case InterceptParams:
		p.Traceparent = tp
		return p
	case StrategyInvokeParams:
		p.Traceparent = tp
		return p
	case ProviderInvokeParams:
		p.Traceparent = tp
		return p
	case ActionRunParams:
		p.Traceparent = tp
		return p
	case ContributionInvokeParams:
		p.Traceparent = tp
		return p
	}
	return params
}
