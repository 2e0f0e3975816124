package hostcap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
)

// outcome is one call of a handler: its answer or error, and what it
// audited.
type outcome struct {
	out    json.RawMessage
	err    *protocol.Error
	audits []observe.Event
}

// call calls h's method with input as plugin "p" would, under an auditor.
func call(t *testing.T, h capability.Handler, key capability.Key, method, input string) outcome {
	t.Helper()
	var o outcome
	ctx := observe.WithAudit(context.Background(), func(e observe.Event) { o.audits = append(o.audits, e) })
	var in json.RawMessage
	if input != "" {
		in = json.RawMessage(input)
	}
	out, err := h(ctx, &capability.Call{Caller: "p", Capability: key, Method: method, Input: in, Generation: 1})
	o.out = out
	if err != nil && !errors.As(err, &o.err) {
		t.Fatalf("error %v (%T) is not a *protocol.Error", err, err)
	}
	return o
}

// reason is the reason in a refusal's data.
func (o outcome) reason() string {
	if o.err == nil {
		return ""
	}
	var d struct{ Reason string }
	_ = json.Unmarshal(o.err.Data, &d)
	return d.Reason
}

// state is the outcome of the one audit, or what went wrong.
func (o outcome) state() string {
	if len(o.audits) != 1 {
		return fmt.Sprintf("%d audits", len(o.audits))
	}
	return o.audits[0].State
}
