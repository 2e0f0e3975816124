// Command echoplugin is the go-plugin (net/rpc) peer of
// testdata/bench/sdkplugin: it declares the same ten things and echoes
// its input.
package main

import (
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/extkernel/extkernel/bench/goplugin/echo"
	"github.com/extkernel/extkernel/protocol"
)

type impl struct{}

func (impl) Declarations() (*protocol.InitializeResult, error) {
	return &protocol.InitializeResult{
		ProtocolVersion: protocol.Version,
		Name:            os.Getenv("EXTKERNEL_PLUGIN_NAME"),
		Version:         "1.0.0",
		Provides:        []protocol.CapabilityDecl{{Capability: "bench.echo", Version: "1.0.0"}, {Capability: "bench.kv", Version: "1.0.0"}},
		Interceptors:    []protocol.InterceptorDecl{{Point: "tool.before"}, {Point: "tool.after"}, {Point: "model.request"}},
		Strategies:      []protocol.StrategyDecl{{Slot: "context.compactor"}},
		Providers: []protocol.ProviderDecl{
			{Ref: "echo", Description: "returns its input"},
			{Ref: "upper", Description: "upper-cases a string"},
			{Ref: "size", Description: "returns the input's length in bytes"},
		},
		Actions: []protocol.ActionDecl{{ID: "greet", Title: "Greet", Placement: "toolbar"}},
	}, nil
}

func (impl) Echo(input []byte) ([]byte, error) { return input, nil }

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: echo.Handshake,
		Plugins:         echo.Plugins(impl{}),
		Logger:          hclog.NewNullLogger(),
	})
}
