package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// toolPlugin contributes two tools and a read-only theme (protocol 1.1)
// beside a provider.
func toolPlugin() *Plugin {
	p := New("tools", "1.0.0")
	p.Provider("echo", "", func(_ context.Context, in json.RawMessage) (any, error) { return in, nil })
	p.Contribute("tool", "search.web", Contribution{Title: "Web search", Data: map[string]string{"input": "a query"}},
		func(_ context.Context, in json.RawMessage) (any, error) {
			return map[string]any{"results": []string{"found " + string(in)}}, nil
		})
	p.Contribute("tool", "fail", Contribution{}, func(context.Context, json.RawMessage) (any, error) {
		return nil, errors.New("no network")
	})
	three := 3
	p.Contribute("theme", "editor", Contribution{Priority: &three, Data: json.RawMessage(`{"bg":"#000"}`)}, nil)
	return p
}

// TestContribute declares contributions to a 1.1 host, serves
// contribution/invoke, and declares none to a 1.0 host.
func TestContribute(t *testing.T) {
	three := 3
	decls := []protocol.ContributionDecl{
		{Kind: "tool", Key: "search.web", Title: "Web search", Data: json.RawMessage(`{"input":"a query"}`)},
		{Kind: "tool", Key: "fail"},
		{Kind: "theme", Key: "editor", Priority: &three, Data: json.RawMessage(`{"bg":"#000"}`)},
	}
	t.Run("1.1 host", func(t *testing.T) {
		h := serve(t, toolPlugin())
		if res := h.initialize(1); !reflect.DeepEqual(res.Contributions, decls) {
			t.Errorf("contributions = %+v, want %+v", res.Contributions, decls)
		}
		tests := []struct {
			name    string
			params  any
			want    string
			code    int
			message string
		}{
			{name: "invoke", params: wire.ContributionInvokeParams{Kind: "tool", Key: "search.web", Input: json.RawMessage(`"go"`)},
				want: `{"output":{"results":["found \"go\""]}}`},
			{name: "handler error", params: wire.ContributionInvokeParams{Kind: "tool", Key: "fail"}, code: protocol.CodePluginError, message: "no network"},
			{name: "read only", params: wire.ContributionInvokeParams{Kind: "theme", Key: "editor"}, code: protocol.CodeUnknownTarget,
				message: `theme "editor" has no handler: the host only reads it`},
			{name: "unknown", params: wire.ContributionInvokeParams{Kind: "tool", Key: "echo"}, code: protocol.CodeUnknownTarget,
				message: `unknown contribution "tool echo" (declared: theme editor, tool fail, tool search.web)`},
			{name: "missing params", code: protocol.CodeInvalidParams, message: "missing params"},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				h.t = t
				h.call(10+i, wire.MethodContributionInvoke, tt.params)
				if tt.code != 0 {
					h.error(10+i, tt.code, tt.message)
				} else {
					h.result(10+i, tt.want)
				}
			})
		}
		h.t = t
	})
	t.Run("1.0 host", func(t *testing.T) {
		h := serve(t, toolPlugin())
		h.call(1, wire.MethodInitialize, initParams("1.0.0"))
		m := h.response(1)
		var res protocol.InitializeResult
		if err := json.Unmarshal(m.Result, &res); err != nil || res.Contributions != nil || len(res.Providers) != 1 {
			t.Errorf("initialize result to a 1.0 host = %s (%v), want the provider alone", m.Result, err)
		}
		h.call(2, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "echo", Input: json.RawMessage(`1`)})
		h.result(2, `{"output":1}`)
	})
}

// TestContributePanics: registration refuses programmer errors.
func TestContributePanics(t *testing.T) {
	noop := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	tests := []struct {
		name string
		reg  func(p *Plugin)
	}{
		{"empty kind", func(p *Plugin) { p.Contribute("", "k", Contribution{}, noop) }},
		{"empty key", func(p *Plugin) { p.Contribute("tool", "", Contribution{}, noop) }},
		{"duplicate", func(p *Plugin) {
			p.Contribute("tool", "k", Contribution{}, noop)
			p.Contribute("tool", "k", Contribution{}, nil)
		}},
		{"data not JSON", func(p *Plugin) { p.Contribute("tool", "k", Contribution{Data: json.RawMessage(`{`)}, noop) }},
		{"data not marshallable", func(p *Plugin) { p.Contribute("tool", "k", Contribution{Data: func() {}}, noop) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tt.reg(New("p", "1.0.0"))
		})
	}
}
