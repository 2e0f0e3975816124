// Command go-sdk is a plugin of the current Go SDK, for
// TestCurrentSDKWithOldHost (internal/corpus): unlike the rest of the
// corpus it follows the SDK, and it uses what later protocol versions
// added (a capability call, progress) so that the test sees the SDK keep
// them from a 1.0.0 host.
package main

import (
	"context"
	"encoding/json"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

func main() {
	p := sdk.New("go-sdk", "1.0.0")
	p.Intercept("tool.before", func(context.Context, string, json.RawMessage) (protocol.InterceptResult, error) {
		return sdk.Continue(), nil
	})
	p.Provider("echo", "returns its input", func(_ context.Context, input json.RawMessage) (any, error) {
		return input, nil
	})
	p.Provider("progress", "reports progress (protocol 1.3), then answers", func(ctx context.Context, _ json.RawMessage) (any, error) {
		_ = sdk.Progress(ctx, "halfway", 0.5)
		return "done", nil
	})
	p.Provider("recall", "calls storage.kv (protocol 1.1)", func(ctx context.Context, input json.RawMessage) (any, error) {
		return p.Call(ctx, "storage.kv", "get", input)
	})
	p.Action("hello", "Say hello", "toolbar", func(context.Context, json.RawMessage) (any, error) {
		return "hello", nil
	})
	p.Serve()
}
