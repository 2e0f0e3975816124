package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// fixture is a plugin with one handler of every kind and every failure.
func fixture() *Plugin {
	p := New("tester", "1.0.0")
	p.Provide("storage.kv", "1.2.0")
	p.Intercept("tool.before", func(_ context.Context, _ string, payload json.RawMessage) (protocol.InterceptResult, error) {
		switch {
		case strings.Contains(string(payload), "secret"):
			return Modify(map[string]string{"text": "[redacted]"}), nil
		case strings.Contains(string(payload), "rm -rf"):
			return Deny("destructive command"), nil
		}
		return Continue(), nil
	})
	p.InterceptWithPriority("tool.after", 5, func(context.Context, string, json.RawMessage) (protocol.InterceptResult, error) {
		return protocol.InterceptResult{}, errors.New("audit log unavailable")
	})
	p.Intercept("bad.decision", func(context.Context, string, json.RawMessage) (protocol.InterceptResult, error) {
		return protocol.InterceptResult{Decision: "maybe"}, nil
	})
	p.Intercept("bad.modify", func(context.Context, string, json.RawMessage) (protocol.InterceptResult, error) {
		return Modify(func() {}), nil
	})
	echo := func(_ context.Context, in json.RawMessage) (any, error) { return in, nil }
	p.Strategy("context.compactor", echo)
	p.Provider("echo", "echoes its input", echo)
	p.Provider("fail", "", func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("disk full") })
	p.Provider("coded", "", func(context.Context, json.RawMessage) (any, error) {
		return nil, Errorf(protocol.CodeInvalidParams, "want a path")
	})
	p.Provider("panic", "", func(context.Context, json.RawMessage) (any, error) { panic("boom") })
	p.Provider("func", "", func(context.Context, json.RawMessage) (any, error) { return func() {}, nil })
	p.Provider("nil", "", func(context.Context, json.RawMessage) (any, error) { return nil, nil })
	p.Action("hello", "Say hello", "toolbar", func(_ context.Context, in json.RawMessage) (any, error) {
		return map[string]string{"greeting": "hello " + string(in)}, nil
	})
	return p
}

func TestCalls(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		params  any
		want    string // result, compact JSON
		code    int    // or error code
		message string // contained in the error message
	}{
		{name: "intercept continue", method: wire.MethodIntercept, params: wire.InterceptParams{Point: "tool.before", Payload: json.RawMessage(`{"text":"ls"}`)}, want: `{"decision":"continue"}`},
		{name: "intercept modify", method: wire.MethodIntercept, params: wire.InterceptParams{Point: "tool.before", Payload: json.RawMessage(`{"text":"secret"}`)}, want: `{"decision":"modify","payload":{"text":"[redacted]"}}`},
		{name: "intercept deny", method: wire.MethodIntercept, params: wire.InterceptParams{Point: "tool.before", Payload: json.RawMessage(`{"text":"rm -rf /"}`)}, want: `{"decision":"deny","reason":"destructive command"}`},
		{name: "intercept unknown point", method: wire.MethodIntercept, params: wire.InterceptParams{Point: "nope"}, code: protocol.CodeUnknownTarget, message: `unknown point "nope" (declared: bad.decision, bad.modify, tool.after, tool.before)`},
		{name: "intercept handler error", method: wire.MethodIntercept, params: wire.InterceptParams{Point: "tool.after"}, code: protocol.CodePluginError, message: "audit log unavailable"},
		{name: "intercept unknown decision", method: wire.MethodIntercept, params: wire.InterceptParams{Point: "bad.decision"}, code: protocol.CodePluginError, message: `unknown decision "maybe"`},
		{name: "intercept unmarshalable modify", method: wire.MethodIntercept, params: wire.InterceptParams{Point: "bad.modify"}, code: protocol.CodePluginError, message: "modify without a payload: marshal payload: json: unsupported type"},
		{name: "strategy", method: wire.MethodStrategyInvoke, params: wire.StrategyInvokeParams{Slot: "context.compactor", Input: json.RawMessage(`[1,2]`)}, want: `{"output":[1,2]}`},
		{name: "strategy unknown slot", method: wire.MethodStrategyInvoke, params: wire.StrategyInvokeParams{Slot: "x.y"}, code: protocol.CodeUnknownTarget, message: `unknown slot "x.y" (declared: context.compactor)`},
		{name: "provider", method: wire.MethodProviderInvoke, params: wire.ProviderInvokeParams{Ref: "echo", Input: json.RawMessage(`{"q":"a"}`)}, want: `{"output":{"q":"a"}}`},
		{name: "provider nil output", method: wire.MethodProviderInvoke, params: wire.ProviderInvokeParams{Ref: "nil"}, want: `{}`},
		{name: "provider unknown", method: wire.MethodProviderInvoke, params: wire.ProviderInvokeParams{Ref: "nope"}, code: protocol.CodeUnknownTarget, message: `unknown provider "nope"`},
		{name: "provider error", method: wire.MethodProviderInvoke, params: wire.ProviderInvokeParams{Ref: "fail"}, code: protocol.CodePluginError, message: "disk full"},
		{name: "provider coded error", method: wire.MethodProviderInvoke, params: wire.ProviderInvokeParams{Ref: "coded"}, code: protocol.CodeInvalidParams, message: "want a path"},
		{name: "provider panic", method: wire.MethodProviderInvoke, params: wire.ProviderInvokeParams{Ref: "panic"}, code: wire.CodeInternalError, message: "provider/invoke handler panicked: boom"},
		{name: "still alive after panic", method: wire.MethodPing, params: struct{}{}, want: `{}`},
		{name: "provider unmarshalable output", method: wire.MethodProviderInvoke, params: wire.ProviderInvokeParams{Ref: "func"}, code: wire.CodeInternalError, message: "marshal output"},
		{name: "action", method: wire.MethodActionRun, params: wire.ActionRunParams{ID: "hello", Context: json.RawMessage(`"world"`)}, want: `{"output":{"greeting":"hello \"world\""}}`},
		{name: "action unknown", method: wire.MethodActionRun, params: wire.ActionRunParams{ID: "bye"}, code: protocol.CodeUnknownTarget, message: `unknown action "bye" (declared: hello)`},
		{name: "ping", method: wire.MethodPing, want: `{}`},
		{name: "unknown method", method: "tool/run", params: struct{}{}, code: protocol.CodeMethodNotFound, message: `method "tool/run" not found`},
		{name: "missing params", method: wire.MethodIntercept, code: protocol.CodeInvalidParams, message: "missing params"},
		{name: "invalid params", method: wire.MethodProviderInvoke, params: []int{1}, code: protocol.CodeInvalidParams, message: "invalid params"},
		{name: "second initialize", method: wire.MethodInitialize, params: initParams(protocol.Version), code: wire.CodeInvalidRequest, message: "already initialized"},
	}
	h := serve(t, fixture())
	h.initialize(1)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.t = t
			id := 100 + i
			h.call(id, tt.method, tt.params)
			if tt.code != 0 {
				h.error(id, tt.code, tt.message)
			} else {
				h.result(id, tt.want)
			}
		})
	}
	h.t = t
}

func TestHandshake(t *testing.T) {
	p := fixture()
	var got protocol.InitializeParams
	p.OnInitialize(func(_ context.Context, params protocol.InitializeParams) error {
		got = params
		return nil
	})
	h := serve(t, p)
	h.call(1, wire.MethodPing, nil)
	h.error(1, wire.CodeNotInitialized, "ping before initialize")
	h.call(2, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "echo"})
	h.error(2, wire.CodeNotInitialized, "provider/invoke before initialize")

	res := h.initialize(3)
	five := 5
	want := &protocol.InitializeResult{
		ProtocolVersion: protocolVersion, Name: "tester", Version: "1.0.0",
		Provides: []protocol.CapabilityDecl{{Capability: "storage.kv", Version: "1.2.0"}},
		Interceptors: []protocol.InterceptorDecl{
			{Point: "tool.before"}, {Point: "tool.after", Priority: &five}, {Point: "bad.decision"}, {Point: "bad.modify"},
		},
		Strategies: []protocol.StrategyDecl{{Slot: "context.compactor"}},
		Providers: []protocol.ProviderDecl{
			{Ref: "echo", Description: "echoes its input"}, {Ref: "fail"}, {Ref: "coded"}, {Ref: "panic"}, {Ref: "func"}, {Ref: "nil"},
		},
		Actions:  []protocol.ActionDecl{{ID: "hello", Title: "Say hello", Placement: "toolbar"}},
		Features: wire.AllFeatures.Names(),
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("initialize result\n got %+v\nwant %+v", res, want)
	}
	if !reflect.DeepEqual(got, initParams(protocol.Version)) {
		t.Errorf("OnInitialize got %+v", got)
	}
}

func TestHandshakeErrors(t *testing.T) {
	tests := []struct {
		name    string
		version string
		hookErr error
		code    int
		message string
	}{
		{name: "newer host", version: "2.0.0", code: wire.CodeUnsupportedVersion, message: "host speaks protocol 2.0.0, this plugin speaks " + protocolVersion + ": upgrade the plugin"},
		{name: "older host", version: "0.9.0", code: wire.CodeUnsupportedVersion, message: "upgrade the host"},
		{name: "not a version", version: "one", code: protocol.CodeInvalidParams, message: `protocol_version: "one" is not a semantic version`},
		{name: "hook error", version: protocol.Version, hookErr: errors.New("config: missing key"), code: protocol.CodePluginError, message: "config: missing key"},
		{name: "hook coded error", version: "1.9.0", hookErr: Errorf(protocol.CodeInvalidParams, "bad config"), code: protocol.CodeInvalidParams, message: "bad config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New("tester", "1.0.0")
			p.OnInitialize(func(context.Context, protocol.InitializeParams) error { return tt.hookErr })
			h := serve(t, p)
			h.call(1, wire.MethodInitialize, initParams(tt.version))
			h.error(1, tt.code, tt.message)
			h.call(2, wire.MethodPing, nil)
			h.error(2, wire.CodeNotInitialized, "before initialize")
		})
	}
}

func TestRegistrationPanics(t *testing.T) {
	noop := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	icpt := func(context.Context, string, json.RawMessage) (protocol.InterceptResult, error) {
		return Continue(), nil
	}
	tests := []struct {
		name string
		reg  func(p *Plugin)
		want string
	}{
		{"empty point", func(p *Plugin) { p.Intercept("", icpt) }, "sdk: Intercept: point must not be empty"},
		{"nil interceptor", func(p *Plugin) { p.InterceptWithPriority("a", 1, nil) }, "sdk: InterceptWithPriority: nil handler"},
		{"duplicate point", func(p *Plugin) { p.Intercept("a", icpt); p.Intercept("a", icpt) }, `sdk: Intercept: duplicate point "a"`},
		{"duplicate slot", func(p *Plugin) { p.Strategy("s", noop); p.Strategy("s", noop) }, `sdk: Strategy: duplicate slot "s"`},
		{"nil provider", func(p *Plugin) { p.Provider("r", "", nil) }, "sdk: Provider: nil handler"},
		{"empty action title", func(p *Plugin) { p.Action("a", "", "", noop) }, "sdk: Action: title must not be empty"},
		{"duplicate capability", func(p *Plugin) { p.Provide("c", "1.0.0"); p.Provide("c", "2.0.0") }, `sdk: Provide: duplicate capability "c"`},
		{"empty version", func(p *Plugin) { p.Provide("c", "") }, "sdk: Provide: version must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if got := recover(); got != tt.want {
					t.Errorf("panic = %v, want %q", got, tt.want)
				}
			}()
			tt.reg(New("p", "1.0.0"))
		})
	}
}

// TestOutputEncoding checks the output result a handler's value is
// encoded to: a json.RawMessage compacted (newlines gone) and validated.
func TestOutputEncoding(t *testing.T) {
	p := New("tester", "1.0.0")
	output := func(v any) HandlerFunc {
		return func(context.Context, json.RawMessage) (any, error) { return v, nil }
	}
	p.Provider("spaced", "", output(json.RawMessage("{ \"a\" :\n [1, \"<b>\"],\r\n\t\"s\": \" x \" }")))
	p.Provider("broken", "", output(json.RawMessage(`{"a":`)))
	p.Provider("empty", "", output(json.RawMessage(nil)))
	p.Provider("string", "", output("a\nb"))
	h := serve(t, p)
	h.initialize(1)
	for i, tt := range []struct {
		ref, want string
		code      int
	}{
		{ref: "spaced", want: `{"output":{"a":[1,"<b>"],"s":" x "}}`},
		{ref: "broken", code: wire.CodeInternalError},
		{ref: "empty", want: `{"output":null}`},
		{ref: "string", want: `{"output":"a\nb"}`},
	} {
		h.call(2+i, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: tt.ref})
		if tt.code != 0 {
			h.error(2+i, tt.code, "marshal output")
		} else {
			h.result(2+i, tt.want)
		}
	}
}

// TestResponseIDs checks that a response carries the request's id as sent,
// an object id compacted, whatever its type.
func TestResponseIDs(t *testing.T) {
	h := serve(t, fixture())
	h.initialize(1)
	for _, tt := range []struct{ id, want string }{
		{`"a b"`, `"a b"`},
		{`-7.5e1`, `-7.5e1`},
		{`{ "k" : [1,  2] }`, `{"k":[1,2]}`},
	} {
		line := `{"jsonrpc":"2.0","id":` + tt.id + `,"method":"provider/invoke","params":{"ref":"echo","input":1}}` + "\n"
		if _, err := h.inW.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		m := h.recv()
		if string(m.ID) != tt.want || string(m.Result) != `{"output":1}` {
			t.Errorf("id %s: response %s, want id %s and output 1", tt.id, frame(m), tt.want)
		}
	}
}
