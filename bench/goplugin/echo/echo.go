// Package echo is the hashicorp/go-plugin peer of the sidecar benchmarks'
// echo plugin: an Echo interface served over go-plugin's net/rpc
// transport, whose Declarations answer carries the same ten declarations as
// testdata/bench/sdkplugin.
package echo

import (
	"net/rpc"

	"github.com/hashicorp/go-plugin"

	"github.com/extkernel/extkernel/protocol"
)

// Handshake is the handshake the host and the plugin agree on.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "EXTKERNEL_BENCH_PLUGIN",
	MagicCookieValue: "echo",
}

// PluginName is the name the plugin is dispensed under.
const PluginName = "echo"

// Echo is the plugin's interface.
type Echo interface {
	// Declarations returns the plugin's declarations, like the answer to
	// initialize.
	Declarations() (*protocol.InitializeResult, error)
	// Echo returns its input.
	Echo(input []byte) ([]byte, error)
}

// Plugin serves an Echo (Impl, in the plugin) and dispenses a client of it
// (in the host).
type Plugin struct{ Impl Echo }

// Server returns the net/rpc server of Impl.
func (p *Plugin) Server(*plugin.MuxBroker) (any, error) { return &server{impl: p.Impl}, nil }

// Client returns an Echo calling the plugin over c.
func (*Plugin) Client(_ *plugin.MuxBroker, c *rpc.Client) (any, error) { return &client{c: c}, nil }

// Plugins is the plugin set both sides use.
func Plugins(impl Echo) plugin.PluginSet {
	return plugin.PluginSet{PluginName: &Plugin{Impl: impl}}
}

type client struct{ c *rpc.Client }

func (c *client) Declarations() (*protocol.InitializeResult, error) {
	res := new(protocol.InitializeResult)
	err := c.c.Call("Plugin.Declarations", struct{}{}, res)
	return res, err
}

func (c *client) Echo(input []byte) ([]byte, error) {
	var out []byte
	err := c.c.Call("Plugin.Echo", input, &out)
	return out, err
}

// server is the net/rpc receiver; its methods follow net/rpc's rules.
type server struct{ impl Echo }

func (s *server) Declarations(_ struct{}, res *protocol.InitializeResult) error {
	d, err := s.impl.Declarations()
	if err == nil {
		*res = *d
	}
	return err
}

func (s *server) Echo(input []byte, out *[]byte) error {
	var err error
	*out, err = s.impl.Echo(input)
	return err
}
