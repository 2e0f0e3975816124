package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

// A plugin that redacts secrets before tools run and provides a word
// counter. A real plugin ends main with p.Serve(); here ServeIO plays it
// against a scripted host.
func Example() {
	p := sdk.New("redactor", "1.0.0")
	p.SetLogger(hclog.NewNullLogger()) // keep the example's stderr quiet
	p.Provide("text.redact", "1.0.0")
	p.Intercept("tool.before", func(ctx context.Context, point string, payload json.RawMessage) (protocol.InterceptResult, error) {
		var in struct{ Command string }
		if err := json.Unmarshal(payload, &in); err != nil {
			return protocol.InterceptResult{}, fmt.Errorf("decode payload: %w", err)
		}
		if strings.Contains(in.Command, "API_KEY=") {
			return sdk.Modify(map[string]string{"command": "[redacted]"}), nil
		}
		return sdk.Continue(), nil
	})
	p.Provider("wordcount", "counts the words of a string", func(ctx context.Context, input json.RawMessage) (any, error) {
		var s string
		if err := json.Unmarshal(input, &s); err != nil {
			return nil, protocol.Errorf(protocol.CodeInvalidParams, "input must be a string: %v", err)
		}
		return len(strings.Fields(s)), nil
	})

	host := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.0.0","host":{"name":"demo","version":"0.1.0"},"plugin":{"name":"redactor","version":"1.0.0","data_dir":"/tmp/redactor"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"intercept","params":{"point":"tool.before","payload":{"command":"API_KEY=xyz make"}}}`,
	}, "\n")
	if err := p.ServeIO(context.Background(), strings.NewReader(host), os.Stdout); err != nil {
		fmt.Println("serve:", err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocol_version":"1.0.0","name":"redactor","version":"1.0.0","provides":[{"capability":"text.redact","version":"1.0.0"}],"interceptors":[{"point":"tool.before"}],"providers":[{"ref":"wordcount","description":"counts the words of a string"}]}}
	// {"jsonrpc":"2.0","id":2,"result":{"decision":"modify","payload":{"command":"[redacted]"}}}
}
