// Package goplugin benchmarks a hashicorp/go-plugin net/rpc plugin doing
// what the sidecar benchmarks' plugins do, side by side with the sidecar
// client and the hand-written floor in the same benchmark binary. It is a
// module of its own so that the main module never depends on go-plugin.
package goplugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/extkernel/extkernel/bench/goplugin/echo"
	"github.com/extkernel/extkernel/internal/benchkit"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

// root is the main module's directory.
const root = "../.."

// pool is the pool of every cold start.
const pool = 4

// input is what every round trip echoes, as in sidecar/bench_test.go.
var input = []byte(`{"tool":"read_file","args":{"path":"/tmp/notes.txt","limit":100}}`)

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "goplugin-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binDir = dir
	// yamux, under go-plugin, logs to os.Stderr when Kill closes a session
	// the plugin already left; go test merges that into the benchmark
	// lines and breaks them. Only the variable is redirected: panics and
	// test output are unaffected.
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		os.Stderr = null
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var bins = sync.OnceValue(func() error {
	return errors.Join(
		benchkit.Build(".", binDir, "./echoplugin"),
		benchkit.Build(root, binDir, "./testdata/bench/floor", "./testdata/bench/sdkplugin"))
})

// binary returns the path of the named benchmark binary, building them all
// on first use.
func binary(b *testing.B, name string) string {
	b.Helper()
	if err := bins(); err != nil {
		b.Fatal(err)
	}
	return filepath.Join(binDir, name)
}

// sdkPlugins installs n copies of the SDK benchmark plugin and returns
// the packages the sidecar starts.
func sdkPlugins(b *testing.B, n int) []*pluginpkg.Package {
	b.Helper()
	pkgs, err := benchkit.Install(b.TempDir(), filepath.Join(root, "testdata/bench/sdkplugin/plugin.json"),
		binary(b, "sdkplugin"), nil, benchkit.Names("bench", n)...)
	if err != nil {
		b.Fatal(err)
	}
	return pkgs
}

// startGoPlugin starts the go-plugin echo plugin as name and completes the
// equivalent of the handshake: connect, dispense, fetch the declarations.
func startGoPlugin(bin, name string) (*plugin.Client, echo.Echo, error) {
	cmd := exec.Command(bin)
	cmd.Env = []string{"EXTKERNEL_PLUGIN_NAME=" + name}
	c := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  echo.Handshake,
		Plugins:          echo.Plugins(nil),
		Cmd:              cmd,
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolNetRPC},
		Logger:           hclog.NewNullLogger(),
	})
	e, err := dispense(c, name)
	if err != nil {
		c.Kill()
		return nil, nil, fmt.Errorf("plugin %q: %w", name, err)
	}
	return c, e, nil
}

func dispense(c *plugin.Client, name string) (echo.Echo, error) {
	rpcClient, err := c.Client()
	if err != nil {
		return nil, err
	}
	raw, err := rpcClient.Dispense(echo.PluginName)
	if err != nil {
		return nil, err
	}
	e := raw.(echo.Echo)
	d, err := e.Declarations()
	if err == nil && (d.Name != name || len(d.Providers) != 3) {
		err = fmt.Errorf("declarations %+v", d)
	}
	return e, err
}

// startGoPlugins starts one go-plugin client per name, at most pool at
// once, and returns the function that kills them all.
func startGoPlugins(ctx context.Context, bin string, names []string) (func() error, error) {
	clients, err := benchkit.StartPool(ctx, names, pool, func(name string) (*plugin.Client, error) {
		c, _, err := startGoPlugin(bin, name)
		return c, err
	})
	kill := func() error {
		var wg sync.WaitGroup
		for _, c := range clients {
			if c != nil {
				wg.Add(1)
				go func() { defer wg.Done(); c.Kill() }()
			}
		}
		wg.Wait()
		return nil
	}
	return kill, err
}

// BenchmarkColdStart starts n plugins per iteration with a pool of 4 and
// stops them with the timer stopped (see benchkit.ColdStart). goplugin:
// go-plugin net/rpc clients up to a dispensed Echo and its declarations;
// sdk and floor as in sidecar/bench_test.go.
func BenchmarkColdStart(b *testing.B) {
	ns := []int{1, 16, 64}
	b.Run("goplugin", func(b *testing.B) {
		for _, n := range ns {
			b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
				bin, names := binary(b, "echoplugin"), benchkit.Names("bench", n)
				benchkit.ColdStart(b, n, func(ctx context.Context) (func() error, error) {
					return startGoPlugins(ctx, bin, names)
				})
			})
		}
	})
	b.Run("sdk", func(b *testing.B) {
		for _, n := range ns {
			b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
				plugins := sdkPlugins(b, n)
				byName := map[string]*pluginpkg.Package{}
				for _, p := range plugins {
					byName[p.Name] = p
				}
				names := benchkit.Names("bench", n)
				benchkit.ColdStart(b, n, func(ctx context.Context) (func() error, error) {
					// Start of each under the pool bound, as a kernel's
					// build starts a generation's plugins.
					clients, err := benchkit.StartPool(ctx, names, pool, func(name string) (*sidecar.Client, error) {
						return sidecar.Start(ctx, byName[name], sidecar.Options{})
					})
					return func() error { return benchkit.CloseClients(ctx, clients) }, err
				})
			})
		}
	})
	b.Run("floor", func(b *testing.B) {
		for _, n := range ns {
			b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
				bin, names := binary(b, "floor"), benchkit.Names("bench", n)
				benchkit.ColdStart(b, n, func(ctx context.Context) (func() error, error) {
					procs, err := benchkit.StartFloors(ctx, bin, names, pool)
					return func() error { return benchkit.CloseAll(procs) }, err
				})
			})
		}
	})
}

// BenchmarkRoundTrip makes sequential echo calls of the same input and
// reports p50-ns, p99-ns, allocations and plugin-cpu-ns/op (see
// benchkit.RoundTrip).
func BenchmarkRoundTrip(b *testing.B) {
	b.Run("goplugin", func(b *testing.B) {
		c, e, err := startGoPlugin(binary(b, "echoplugin"), "bench-00")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Kill)
		benchkit.RoundTrip(b, c.ReattachConfig().Pid, func() error {
			out, err := e.Echo(input)
			if err == nil && !bytes.Equal(out, input) {
				err = fmt.Errorf("echo returned %q", out)
			}
			return err
		})
	})
	params := wire.ProviderInvokeParams{Ref: "echo", Input: input}
	check := func(out []byte, err error) error {
		if err == nil && !bytes.Equal(out, input) {
			err = fmt.Errorf("echo returned %s", out)
		}
		return err
	}
	b.Run("client", func(b *testing.B) {
		ctx := context.Background()
		c, err := sidecar.Start(ctx, sdkPlugins(b, 1)[0], sidecar.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			if err := c.Close(ctx); err != nil {
				b.Error(err)
			}
		})
		benchkit.RoundTrip(b, c.PID(), func() error {
			return check(c.Invoke(ctx, wire.MethodProviderInvoke, params))
		})
	})
	b.Run("jsonfloor", func(b *testing.B) {
		c, err := benchkit.StartJSONClient(binary(b, "floor"), "bench-00")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			if err := c.Close(); err != nil {
				b.Error(err)
			}
		})
		benchkit.RoundTrip(b, c.PID(), func() error {
			var res wire.OutputResult
			err := c.Call(wire.MethodProviderInvoke, params, &res)
			return check(res.Output, err)
		})
	})
}
