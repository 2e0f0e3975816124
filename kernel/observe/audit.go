package observe

import "context"

// The outcomes of an audited action: the State of an EventAudit.
const (
	// AuditAllowed: the host's policy allowed the action, and it was done.
	AuditAllowed = "allowed"
	// AuditDenied: the host's policy refused it (a path outside the roots
	// it serves, a URL outside its allowlist); nothing was done.
	AuditDenied = "denied"
	// AuditFailed: it was allowed but failed (a file not found, a
	// connection refused, a bound exceeded).
	AuditFailed = "failed"
)

// auditKey finds the auditor in a context.
type auditKey struct{}

// WithAudit returns a copy of ctx whose Audit calls hand their event to
// fn. The kernel gives every host handler's ctx one that publishes the
// event as an EventAudit to kernel.Kernel.Subscribe's callbacks, with the
// call's plugin, capability, method and generation filled in; a test of a
// handler gives one of its own to see what it records. fn is called from
// the goroutine calling Audit and must return quickly.
func WithAudit(ctx context.Context, fn func(Event)) context.Context {
	return context.WithValue(ctx, auditKey{}, fn)
}

// Audit records an action of the host capability handler serving the
// call of ctx (capability.Handler): e's Target (what it acted on), State
// (AuditAllowed, AuditDenied or AuditFailed), Message and Err; the
// kernel sets the rest. It reports whether ctx carried an auditor (see
// WithAudit): without one, nothing is recorded.
func Audit(ctx context.Context, e Event) bool {
	fn, _ := ctx.Value(auditKey{}).(func(Event))
	if fn == nil {
		return false
	}
	fn(e)
	return true
}
