package kernel

import (
	"context"
	"errors"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/kernel/observe"
)

// withAudit gives a host handler's ctx the auditor that publishes what
// the handler records (observe.Audit) as an observe.EventAudit of call:
// the kernel sets the type, the caller, the capability, the method and
// the generation, whatever the handler put there, and redacts every
// string the plugin may have supplied (Err becomes an error of its
// redacted text alone, which a host cannot unwrap to the original).
func (k *Kernel) withAudit(ctx context.Context, call *capability.Call) context.Context {
	return observe.WithAudit(ctx, func(e observe.Event) {
		a := observe.Event{Type: observe.EventAudit, Generation: call.Generation, Plugin: call.Caller,
			Capability: string(call.Capability), Method: k.redactText(call.Method),
			Target: k.redactText(e.Target), State: e.State, Message: k.redactText(e.Message)}
		if e.Err != nil {
			a.Err = errors.New(k.redactText(e.Err.Error()))
		}
		k.events.emit(a)
	})
}
