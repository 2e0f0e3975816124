package sdk

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// TestCrossLanguageContribute plays a 1.1 host against the examples' tool
// "text.upper" (a contribution of a host-declared kind): declared in
// initialize, invoked with contribution/invoke, and an unknown one
// answered -32004. TestCrossLanguageExamples holds that a 1.0 host is
// declared none.
func TestCrossLanguageContribute(t *testing.T) {
	for _, tt := range []struct{ name, interpreter, dir, script string }{
		{"python", "python3", "python", "example_plugin.py"},
		{"node", "node", "node", "example_plugin.js"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startProcess(t, tt.interpreter, tt.dir, tt.script)
			p.send(1, wire.MethodInitialize, initParams("1.1.0"))
			var res protocol.InitializeResult
			if err := json.Unmarshal(p.expect(1, "", 0).Result, &res); err != nil {
				t.Fatal(err)
			}
			want := []protocol.ContributionDecl{{Kind: "tool", Key: "text.upper", Title: "Upper-case a text",
				Data: json.RawMessage(`{"input":{"type":"string"}}`)}}
			got := res.Contributions
			for i := range got {
				var v any
				if err := json.Unmarshal(got[i].Data, &v); err == nil {
					got[i].Data, _ = json.Marshal(v) // compact, whatever the SDK's spacing
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("contributions = %+v, want %+v", got, want)
			}
			p.send(2, wire.MethodContributionInvoke, wire.ContributionInvokeParams{Kind: "tool", Key: "text.upper", Input: json.RawMessage(`"make -j8"`)})
			p.expect(2, `{"output":"MAKE -J8"}`, 0)
			p.send(3, wire.MethodContributionInvoke, wire.ContributionInvokeParams{Kind: "tool", Key: "text.lower"})
			p.expect(3, "", protocol.CodeUnknownTarget)
			p.send(4, wire.MethodContributionInvoke, wire.ContributionInvokeParams{Kind: "tool", Key: "text.upper", Input: json.RawMessage(`3`)})
			p.expect(4, "", protocol.CodeInvalidParams)
			p.send(5, wire.MethodContributionInvoke, map[string]int{"kind": 1})
			p.expect(5, "", protocol.CodeInvalidParams)
			p.send(6, wire.MethodShutdown, nil)
			p.expect(6, `{}`, 0)
			p.exit()
		})
	}
}
