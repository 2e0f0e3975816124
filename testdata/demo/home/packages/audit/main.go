// Command audit is a demo plugin: it records every tool call after it ran.
package main

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

func main() {
	var calls atomic.Int64
	p := sdk.New("audit", "1.0.0")
	p.Intercept("tool.after", func(_ context.Context, _ string, payload json.RawMessage) (protocol.InterceptResult, error) {
		n := calls.Add(1)
		p.Logger().Info("tool call recorded", "n", n, "bytes", len(payload))
		return sdk.Continue(), nil
	})
	p.Action("show", "Show the audit log", "status-bar", func(context.Context, json.RawMessage) (any, error) {
		return map[string]int64{"calls": calls.Load()}, nil
	})
	p.Serve()
}
