package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// TestInitResultEncoding checks that the hand-encoded initialize result is
// byte for byte json.Marshal's encoding of the same InitializeResult.
func TestInitResultEncoding(t *testing.T) {
	noop := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	intercept := func(context.Context, string, json.RawMessage) (protocol.InterceptResult, error) {
		return Continue(), nil
	}
	odd := "tab\t nl\n quote\" back\\ <b>&amp; é \u2028\u2029 \x01 \x7f bad\xff utf8"
	tests := []struct {
		name, plugin, version string
		setup                 func(p *Plugin)
	}{
		{name: "empty", plugin: "p", version: "1.0.0", setup: func(*Plugin) {}},
		{name: "empty identity", setup: func(*Plugin) {}},
		{name: "every kind", plugin: "bench", version: "1.2.3", setup: func(p *Plugin) {
			p.Provide("a.b", "1.0.0")
			p.Provide("c.d", "2.0.0")
			p.Intercept("tool.before", intercept)
			p.InterceptWithPriority("tool.after", -7, intercept)
			p.InterceptWithPriority("model.request", 0, intercept)
			p.Strategy("context.compactor", noop)
			p.Provider("echo", "returns its input", noop)
			p.Provider("bare", "", noop)
			p.ProviderWithSchema("schema", "spaced schema", json.RawMessage(" {\n \"type\" : \"object\",\t\"x\": [1, 2.5e3, true, null] }\n"), noop)
			p.ProviderWithSchema("html", "", json.RawMessage(`{"pattern":"<a>&</a> \u2028 `+"\u2028\u2029"+`"}`), noop)
			p.ProviderWithSchema("empty schema", "", json.RawMessage{}, noop)
			p.Action("greet", "Greet", "toolbar", noop)
			p.Action("plain", "Plain", "", noop)
			five := 5
			p.Contribute("tool", "search.web", Contribution{Title: "Web search", Data: map[string]any{"schema": map[string]string{"type": "string"}}}, noop)
			p.Contribute("hook", "tool.before", Contribution{Priority: &five, Data: json.RawMessage(" [1, \"<a>&\"] ")}, nil)
			p.Contribute("bare", "x", Contribution{}, noop)
		}},
		{name: "escapes", plugin: odd, version: odd, setup: func(p *Plugin) {
			p.Provide(odd, odd)
			p.Intercept(odd, intercept)
			p.Strategy(odd, noop)
			p.Provider(odd, odd, noop)
			p.Action(odd, odd, odd, noop)
			p.Contribute(odd, odd, Contribution{Title: odd, Data: odd}, noop)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(tt.plugin, tt.version)
			tt.setup(p)
			want, err := json.Marshal(p.mu.reg.initResult(tt.plugin, tt.version))
			if err != nil {
				t.Fatal(err)
			}
			got, ok := p.mu.reg.result(tt.plugin, tt.version).(encoded)
			if !ok {
				t.Fatalf("result is %T, want encoded", p.mu.reg.result(tt.plugin, tt.version))
			}
			if !bytes.Equal(got, want) {
				t.Errorf("result\n got %s\nwant %s", got, want)
			}
		})
	}
}

// TestInitResultInvalidSchema checks that a schema that is not JSON fails
// the initialize answer as json.Marshal fails it.
func TestInitResultInvalidSchema(t *testing.T) {
	p := New("p", "1.0.0")
	p.ProviderWithSchema("bad", "", json.RawMessage(`{"type":`), func(context.Context, json.RawMessage) (any, error) { return nil, nil })
	res := p.mu.reg.result("p", "1.0.0")
	if _, ok := res.(protocol.InitializeResult); !ok {
		t.Fatalf("result is %T, want protocol.InitializeResult (to fail in reply)", res)
	}
	if _, err := json.Marshal(res); err == nil {
		t.Fatal("marshalling the result succeeded")
	}
}

// TestInitResultFields fails when a field is added to the initialize
// result or a declaration type: registry.result must then encode it.
func TestInitResultFields(t *testing.T) {
	for _, tt := range []struct {
		v      any
		fields int
	}{
		{protocol.InitializeResult{}, 10},
		{protocol.CapabilityDecl{}, 2},
		{protocol.InterceptorDecl{}, 2},
		{protocol.StrategyDecl{}, 1},
		{protocol.ProviderDecl{}, 3},
		{protocol.ActionDecl{}, 3},
		{protocol.ContributionDecl{}, 5},
	} {
		if n := reflect.TypeOf(tt.v).NumField(); n != tt.fields {
			t.Errorf("%T has %d fields, registry.result encodes %d: update it (sdk/initresult.go) and this test", tt.v, n, tt.fields)
		}
	}
}

// TestNewIdentity checks that New takes an empty name or version from the
// environment the kernel sets (EXTKERNEL_PLUGIN_NAME and
// EXTKERNEL_PLUGIN_VERSION), and that a value given wins over it.
func TestNewIdentity(t *testing.T) {
	tests := []struct {
		name, plugin, version string
		wantName, wantVersion string
	}{
		{name: "from the environment", wantName: "envname", wantVersion: "2.3.4"},
		{name: "given wins", plugin: "given", version: "9.9.9", wantName: "given", wantVersion: "9.9.9"},
		{name: "version only", version: "1.0.1", wantName: "envname", wantVersion: "1.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(wire.EnvPluginName, "envname")
			t.Setenv(wire.EnvPluginVersion, "2.3.4")
			h := serve(t, New(tt.plugin, tt.version))
			res := h.initialize(1)
			if res.Name != tt.wantName || res.Version != tt.wantVersion {
				t.Errorf("initialize answered name %q version %q, want %q %q", res.Name, res.Version, tt.wantName, tt.wantVersion)
			}
		})
	}
}
