//go:build unix

package sidecar

// Benchmarks of the host side against hand-written floors run in the same
// benchmark binary; BENCHMARKS.md (## sidecar) has the commands and the
// figures. The plugins are built once per test binary into binDir:
// testdata/bench/sdkplugin (the Go SDK, ten declarations) and
// testdata/bench/floor (the standard library only, the same ten
// declarations; "raw" mode echoes lines). internal/benchkit holds the floor
// client and the reports, shared with the go-plugin peer in bench/goplugin.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/extkernel/extkernel/internal/benchkit"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// benchManifest authorizes the ten declarations of both benchmark plugins.
const benchManifest = "../testdata/bench/sdkplugin/plugin.json"

// benchPool is the pool of every cold start, sidecar and floor alike.
const benchPool = 4

// benchInput is the input every round trip echoes (65 bytes).
var benchInput = json.RawMessage(`{"tool":"read_file","args":{"path":"/tmp/notes.txt","limit":100}}`)

var benchParams = wire.ProviderInvokeParams{Ref: "echo", Input: benchInput}

var benchBins = sync.OnceValues(func() (string, error) {
	dir := filepath.Join(binDir, "bench")
	return dir, benchkit.Build("..", dir, "./testdata/bench/floor", "./testdata/bench/sdkplugin")
})

// benchBinaries returns the paths of the floor and SDK plugin binaries,
// built on first use.
func benchBinaries(b *testing.B) (floor, sdk string) {
	b.Helper()
	dir, err := benchBins()
	if err != nil {
		b.Fatal(err)
	}
	return filepath.Join(dir, "floor"), filepath.Join(dir, "sdkplugin")
}

// benchPackages installs n packages running bin with args in a fresh
// home.
func benchPackages(b *testing.B, bin string, n int, args ...string) []*pluginpkg.Package {
	b.Helper()
	pkgs, err := benchkit.Install(b.TempDir(), benchManifest, bin, args, benchkit.Names("bench", n)...)
	if err != nil {
		b.Fatal(err)
	}
	return pkgs
}

// benchOptions are the defaults a host would run with (heartbeats on),
// logs discarded.
func benchOptions() Options { return Options{Host: protocol.HostInfo{Name: "bench", Version: "0.0.0"}} }

// BenchmarkColdStart starts n plugins with a pool of 4 per iteration and
// closes them with the timer stopped; close time is reported separately
// as close-ns/op (see benchkit.ColdStart). sdk: Start of n SDK plugins
// under the pool (spawn, handshake, declaration checks). floor: the same pool
// bound with a semaphore, exec of the floor binary and a hand-written
// initialize exchange. The crossed pairs, at n=16 only, attribute the gap:
// manager-to-floor is Start of the floor binary (host cost alone),
// floor-to-sdk the floor's start of the SDK binary (plugin cost alone).
func BenchmarkColdStart(b *testing.B) {
	floor, sdk := benchBinaries(b)
	ns := []int{1, 16, 64}
	b.Run("sdk", func(b *testing.B) {
		for _, n := range ns {
			b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { managerStart(b, sdk, n) })
		}
	})
	b.Run("floor", func(b *testing.B) {
		for _, n := range ns {
			b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { floorStart(b, floor, n) })
		}
	})
	b.Run("manager-to-floor/n=16", func(b *testing.B) { managerStart(b, floor, 16) })
	b.Run("floor-to-sdk/n=16", func(b *testing.B) { floorStart(b, sdk, 16) })
}

// BenchmarkColdStartPaired measures the four starts of BenchmarkColdStart
// interleaved in one loop (benchkit.ColdStartPaired): each iteration
// starts n plugins with the floor, Start on the SDK plugin, Start on
// the floor plugin and the floor host on the SDK plugin, in
// rotating order, and reports the medians and their ratios to the
// floor's. Run it with a fixed count, e.g. -benchtime 100x.
func BenchmarkColdStartPaired(b *testing.B) {
	floor, sdk := benchBinaries(b)
	for _, n := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			benchkit.ColdStartPaired(b, []benchkit.Starter{
				{Name: "floor", Start: floorStarter(floor, n)},
				{Name: "sdk", Start: managerStarter(b, sdk, n)},
				{Name: "manager-to-floor", Start: managerStarter(b, floor, n)},
				{Name: "floor-to-sdk", Start: floorStarter(sdk, n)},
			})
		})
	}
}

// managerStart measures the start of n packages running bin, Start under
// the pool bound.
func managerStart(b *testing.B, bin string, n int) {
	benchkit.ColdStart(b, n, managerStarter(b, bin, n))
}

// managerStarter returns a start of n packages running bin: Start of each,
// at most benchPool at a time (benchkit.StartPool, the bound the floor
// starts under too; a kernel starts a generation's plugins this way).
func managerStarter(b *testing.B, bin string, n int) func(context.Context) (func() error, error) {
	pkgs := benchPackages(b, bin, n)
	byName := make(map[string]*pluginpkg.Package, n)
	names := make([]string, n)
	for i, p := range pkgs {
		byName[p.Name], names[i] = p, p.Name
	}
	return func(ctx context.Context) (func() error, error) {
		clients, err := benchkit.StartPool(ctx, names, benchPool, func(name string) (*Client, error) {
			return Start(ctx, byName[name], benchOptions())
		})
		return func() error { return benchkit.CloseClients(ctx, clients) }, err
	}
}

// floorStart measures the floor's start of n processes of bin.
func floorStart(b *testing.B, bin string, n int) {
	benchkit.ColdStart(b, n, floorStarter(bin, n))
}

// floorStarter returns the floor host's start of n processes of bin.
func floorStarter(bin string, n int) func(context.Context) (func() error, error) {
	names := benchkit.Names("bench", n)
	return func(ctx context.Context) (func() error, error) {
		procs, err := benchkit.StartFloors(ctx, bin, names, benchPool)
		return func() error { return benchkit.CloseAll(procs) }, err
	}
}

// startBenchClient starts one sidecar client on bin with args; it is
// closed when the benchmark ends.
func startBenchClient(b *testing.B, bin string, args ...string) *Client {
	b.Helper()
	return startBenchPackage(b, benchPackages(b, bin, 1, args...)[0], benchOptions())
}

// startBenchPackage starts pkg's plugin with opts; it is closed when the
// benchmark ends.
func startBenchPackage(b *testing.B, pkg *pluginpkg.Package, opts Options) *Client {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	c, err := Start(ctx, pkg, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			b.Error(err)
		}
	})
	return c
}

// startFloorClient starts bin (with its handshake) under the floor's JSON
// client; it is closed when the benchmark ends.
func startFloorClient(b *testing.B, bin string) *benchkit.JSONClient {
	b.Helper()
	c, err := benchkit.StartJSONClient(bin, "bench-00")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := c.Close(); err != nil {
			b.Error(err)
		}
	})
	return c
}

// benchEcho makes echo calls to one plugin process.
type benchEcho struct {
	call func() error
	pid  int // the plugin's, for plugin-cpu-ns/op
}

// clientEcho makes echo calls through the sidecar client.
func clientEcho(c *Client) benchEcho {
	ctx := context.Background()
	return benchEcho{pid: c.PID(), call: func() error {
		out, err := c.Invoke(ctx, wire.MethodProviderInvoke, benchParams)
		return checkEcho(out, err)
	}}
}

// floorEcho makes echo calls through the floor's JSON client.
func floorEcho(c *benchkit.JSONClient) benchEcho {
	return benchEcho{pid: c.PID(), call: func() error {
		var res wire.OutputResult
		err := c.Call(wire.MethodProviderInvoke, benchParams, &res)
		return checkEcho(res.Output, err)
	}}
}

func checkEcho(out json.RawMessage, err error) error {
	if err == nil && !bytes.Equal(out, benchInput) {
		err = fmt.Errorf("echo returned %s", out)
	}
	return err
}

// echoKind is a client and plugin pair that RoundTrip and Throughput
// measure, by sub-benchmark name: client (the sidecar client and the SDK
// plugin) and jsonfloor (the floor's JSON client and the floor plugin);
// the crossed pairs client-to-floor (host cost alone) and jsonfloor-to-sdk
// (plugin cost alone).
type echoKind struct {
	name  string
	start func(b *testing.B) benchEcho
}

func echoKinds(floor, sdk string) []echoKind {
	return []echoKind{
		{"client", func(b *testing.B) benchEcho { return clientEcho(startBenchClient(b, sdk)) }},
		{"jsonfloor", func(b *testing.B) benchEcho { return floorEcho(startFloorClient(b, floor)) }},
		{"client-to-floor", func(b *testing.B) benchEcho { return clientEcho(startBenchClient(b, floor)) }},
		{"jsonfloor-to-sdk", func(b *testing.B) benchEcho { return floorEcho(startFloorClient(b, sdk)) }},
	}
}

// BenchmarkRoundTrip makes sequential echo calls and reports the median
// and 99th percentile of their durations (p50-ns, p99-ns), the host's
// allocations and the plugin's CPU time per call, for each echoKind and
// for rawfloor: the same request bytes written and a line read back from
// the floor in raw mode, no JSON.
func BenchmarkRoundTrip(b *testing.B) {
	floor, sdk := benchBinaries(b)
	for _, kind := range echoKinds(floor, sdk) {
		b.Run(kind.name, func(b *testing.B) {
			e := kind.start(b)
			benchkit.RoundTrip(b, e.pid, e.call)
		})
	}
	b.Run("rawfloor", func(b *testing.B) {
		p, err := benchkit.Spawn(floor, "bench-00", "raw")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			if err := p.Close(); err != nil {
				b.Error(err)
			}
		})
		line, err := json.Marshal(wire.Message{JSONRPC: wire.JSONRPCVersion, ID: json.RawMessage("1"),
			Method: wire.MethodProviderInvoke, Params: mustMarshal(b, benchParams)})
		if err != nil {
			b.Fatal(err)
		}
		line = append(line, '\n')
		benchkit.RoundTrip(b, p.PID(), func() error {
			back, err := p.Echo(line)
			if err == nil && !bytes.Equal(back, line) {
				err = fmt.Errorf("raw echo returned %q", back)
			}
			return err
		})
	})
}

func mustMarshal(b *testing.B, v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkThroughput runs echo calls from 1 or 8 concurrent callers (so
// up to 8 calls are outstanding on the one plugin) for each echoKind and
// reports calls/s, the host's allocations and the plugin's CPU time per
// call.
func BenchmarkThroughput(b *testing.B) {
	floor, sdk := benchBinaries(b)
	for _, kind := range echoKinds(floor, sdk) {
		b.Run(kind.name, func(b *testing.B) {
			for _, callers := range []int{1, 8} {
				b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
					e := kind.start(b)
					for range 100 {
						if err := e.call(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportAllocs()
					benchkit.Callers(b, e.pid, callers, e.call)
				})
			}
		})
	}
}
