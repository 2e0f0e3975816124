package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
)

// TestHandlerAudit holds that what a host handler records with
// observe.Audit reaches Subscribe as an EventAudit naming the caller, the
// capability, the method and the generation, whatever the handler put in
// those fields, with every string the plugin supplied redacted.
func TestHandlerAudit(t *testing.T) {
	const secret = "s3cr3t-in-a-path"
	cfg := callConfig(writeHome(t, callerPlug("reader", nil, "host.log ^1.0")))
	cfg.PluginEnv = map[string]map[string]config.EnvVar{"reader": {"TOKEN": {Value: secret, Secret: true}}}
	cfg.Handlers["host.log"] = func(ctx context.Context, call *capability.Call) (json.RawMessage, error) {
		var in struct{ Path string }
		_ = json.Unmarshal(call.Input, &in)
		err := errors.New("no such file: " + in.Path)
		// Fields the kernel owns are overwritten.
		observe.Audit(ctx, observe.Event{Type: observe.EventNotify, Plugin: "someone-else", Capability: "x", Method: "y",
			Target: in.Path, State: observe.AuditFailed, Message: "read " + in.Path, Err: err})
		return nil, err
	}
	var mu sync.Mutex
	var got []observe.Event
	k := startKernel(t, cfg)
	defer k.Subscribe(func(e observe.Event) {
		if e.Type == observe.EventAudit {
			mu.Lock()
			got = append(got, e)
			mu.Unlock()
		}
	})()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runCaller(t, ctx, k, "reader", callScript("host.log", "read", `{"path":"/srv/`+secret+`"}`, true))
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("audit events = %+v, want 1", got)
	}
	e := got[0]
	want := observe.Event{Type: observe.EventAudit, Generation: 1, Plugin: "reader", Capability: "host.log", Method: "read",
		Target: "/srv/[REDACTED]", State: observe.AuditFailed, Message: "read /srv/[REDACTED]"}
	if e.Err == nil || e.Err.Error() != "no such file: /srv/[REDACTED]" {
		t.Errorf("Err = %v, want the redacted error", e.Err)
	}
	e.Err, e.Time = nil, time.Time{}
	if e.Type != want.Type || e.Generation != want.Generation || e.Plugin != want.Plugin || e.Capability != want.Capability ||
		e.Method != want.Method || e.Target != want.Target || e.State != want.State || e.Message != want.Message {
		t.Errorf("event = %+v\nwant    %+v", e, want)
	}
}

// TestAuditWithoutAuditor: outside a kernel's handler call, Audit records
// nothing and says so; WithAudit's function receives what is recorded.
func TestAuditWithoutAuditor(t *testing.T) {
	if observe.Audit(context.Background(), observe.Event{Target: "/x"}) {
		t.Error("Audit without an auditor reported true")
	}
	var got observe.Event
	ctx := observe.WithAudit(context.Background(), func(e observe.Event) { got = e })
	if !observe.Audit(ctx, observe.Event{Target: "/x", State: observe.AuditAllowed}) || got.Target != "/x" {
		t.Errorf("recorded %+v", got)
	}
}
