package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"log/slog"

	"github.com/extkernel/extkernel/sdk"
)

// A plugin contributing a "tool", a kind its host declares (kernel.json's
// kinds), which its manifest authorizes with
// "contributes": {"tool": ["word.count"]}. The tool is declared to a host
// speaking protocol 1.1 and invoked with contribution/invoke. Here
// ServeIO plays it against a scripted host.
func ExamplePlugin_Contribute() {
	p := sdk.New("words", "1.0.0")
	p.SetLogger(slog.New(slog.DiscardHandler))
	p.Contribute("tool", "word.count", sdk.Contribution{
		Title: "Count words",
		Data:  map[string]any{"input_schema": map[string]string{"type": "string"}},
	}, func(ctx context.Context, input json.RawMessage) (any, error) {
		var s string
		if err := json.Unmarshal(input, &s); err != nil {
			return nil, fmt.Errorf("input must be a string: %w", err)
		}
		return len(strings.Fields(s)), nil
	})

	host := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.1.0","host":{"name":"demo","version":"0.1.0"},"plugin":{"name":"words","version":"1.0.0","data_dir":"/tmp/words"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"contribution/invoke","params":{"kind":"tool","key":"word.count","input":"one two three"}}`,
	}, "\n")
	if err := p.ServeIO(context.Background(), strings.NewReader(host), os.Stdout); err != nil {
		fmt.Println("serve:", err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocol_version":"1.4.0","name":"words","version":"1.0.0","contributions":[{"kind":"tool","key":"word.count","title":"Count words","data":{"input_schema":{"type":"string"}}}],"features":["calls","cancel","contributions","progress","streams","trace"]}}
	// {"jsonrpc":"2.0","id":2,"result":{"output":3}}
}
