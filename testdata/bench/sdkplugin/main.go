// Command sdkplugin is the plugin the sidecar benchmarks measure: built on
// the Go SDK, it makes ten declarations (two capabilities, three
// interceptors, one strategy, three providers, one action), the same ten
// the hand-written floor in testdata/bench/floor answers with, and its
// "echo" provider returns its input unchanged. Its name and version come
// from the environment the host sets, so one binary serves every copy a
// benchmark installs.
package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

func main() {
	p := sdk.New(os.Getenv("EXTKERNEL_PLUGIN_NAME"), os.Getenv("EXTKERNEL_PLUGIN_VERSION"))
	p.Provide("bench.echo", "1.0.0")
	p.Provide("bench.kv", "1.0.0")
	for _, point := range []string{"tool.before", "tool.after", "model.request"} {
		p.Intercept(point, func(context.Context, string, json.RawMessage) (protocol.InterceptResult, error) {
			return sdk.Continue(), nil
		})
	}
	p.Strategy("context.compactor", func(_ context.Context, input json.RawMessage) (any, error) {
		return input, nil
	})
	p.Provider("echo", "returns its input", func(_ context.Context, input json.RawMessage) (any, error) {
		return input, nil
	})
	p.Provider("upper", "upper-cases a string", func(_ context.Context, input json.RawMessage) (any, error) {
		var s string
		err := json.Unmarshal(input, &s)
		return strings.ToUpper(s), err
	})
	p.Provider("size", "returns the input's length in bytes", func(_ context.Context, input json.RawMessage) (any, error) {
		return len(input), nil
	})
	p.Action("greet", "Greet", "toolbar", func(context.Context, json.RawMessage) (any, error) {
		return "hello", nil
	})
	p.Serve()
}
