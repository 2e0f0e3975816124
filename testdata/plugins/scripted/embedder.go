package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

// addEmbedderProviders registers the SCRIPT_NOTIFY, SCRIPT_INIT and
// SCRIPT_SCHEMAS providers.
func addEmbedderProviders(p *sdk.Plugin) {
	if ref := os.Getenv("SCRIPT_NOTIFY"); ref != "" {
		p.Provider(ref, "notifies", func(ctx context.Context, in json.RawMessage) (any, error) {
			if err := p.Notify("called", in); err != nil {
				return nil, err
			}
			if string(in) != `"block"` {
				return nil, nil
			}
			<-ctx.Done()
			return nil, p.Notify("cancelled", in)
		})
	}
	if ref := os.Getenv("SCRIPT_INIT"); ref != "" {
		var params protocol.InitializeParams
		p.OnInitialize(func(_ context.Context, ip protocol.InitializeParams) error {
			params = ip
			return nil
		})
		p.Provider(ref, "returns the initialize params", func(context.Context, json.RawMessage) (any, error) {
			return params, nil
		})
	}
	if v := os.Getenv("SCRIPT_SCHEMAS"); v != "" {
		var schemas map[string]json.RawMessage
		if err := json.Unmarshal([]byte(v), &schemas); err != nil {
			panic(fmt.Sprintf("SCRIPT_SCHEMAS: %v", err))
		}
		for ref, schema := range schemas {
			var calls atomic.Int64
			p.ProviderWithSchema(ref, "counts its calls", schema, func(_ context.Context, in json.RawMessage) (any, error) {
				return map[string]any{"input": in, "calls": calls.Add(1)}, nil
			})
		}
	}
}
