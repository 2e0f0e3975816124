//go:build linux

// Package lazy_test measures what lazy activation costs and saves (issue
// 25; BENCHMARKS.md, "Lazy activation"), each comparison paired within one
// run: a home of 64 installed plugins of which 4 are used against a home
// of only those 4, a generation of 64 lazy members published without a
// spawn, and a lazy member's first call against the cold start of one
// plugin plus one call.
package lazy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/internal/pkgfiles"
	"github.com/extkernel/extkernel/internal/procstat"
	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// scripted is the test plugin binary, built by the first benchmark that
// needs it (a plain `go test` builds nothing here) in dir, which TestMain
// removes.
var (
	dir          string
	scripted     string
	buildOnce    sync.Once
	errBuildOnce error
)

func TestMain(m *testing.M) {
	if home := os.Getenv(childHomeEnv); home != "" {
		os.Exit(childStart(home))
	}
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// plugin builds the scripted test plugin once, and returns its path.
func plugin(tb testing.TB) string {
	buildOnce.Do(func() {
		if dir, errBuildOnce = os.MkdirTemp("", "lazy-bench-"); errBuildOnce != nil {
			return
		}
		scripted = filepath.Join(dir, "scripted")
		out, err := exec.Command("go", "build", "-o", scripted, "../../testdata/plugins/scripted").CombinedOutput()
		if err != nil {
			errBuildOnce = fmt.Errorf("build the scripted plugin: %v\n%s", err, out)
		}
	})
	if errBuildOnce != nil {
		tb.Fatal(errBuildOnce)
	}
	return scripted
}

// home writes a home of n scripted packages, p-00 ... p-<n-1>, each
// declaring its provider echo in its manifest, lazy or eager.
func home(tb testing.TB, n int, lazy bool) string {
	tb.Helper()
	dir := tb.TempDir()
	for i := range n {
		name := fmt.Sprintf("p-%02d", i)
		pkg := filepath.Join(dir, "packages", name)
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.Link(plugin(tb), filepath.Join(pkg, "plugin")); err != nil {
			tb.Fatal(err)
		}
		rt := map[string]any{"command": "./plugin", "env": map[string]string{"SCRIPT_PROVIDERS": "echo"},
			"contributes": map[string][]string{"provider": {"echo"}}}
		if lazy {
			rt["activation"] = pluginpkg.ActivationLazy
		}
		data, _ := json.Marshal(map[string]any{"format": 1, "name": name, "version": "1.0.0", "runtime": rt})
		if err := os.WriteFile(filepath.Join(pkg, "plugin.json"), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	// Files changed within the digest cache's racy window are hashed
	// again at each look (pkgfiles.RacyWindow): a home installed a moment
	// ago is not what a host publishes from day to day.
	time.Sleep(2 * pkgfiles.RacyWindow)
	return dir
}

func cfg(home string) config.Config {
	return config.Config{Home: home, Host: protocol.HostInfo{Name: "bench", Version: "1.0.0"}, Logger: hclog.NewNullLogger(),
		Supervision: config.Supervision{HeartbeatInterval: time.Hour}}
}

// used are the 4 plugins of a home that are called.
var used = []string{"p-00", "p-01", "p-02", "p-03"}

// startAndUse starts a kernel on home and calls each used plugin once,
// the 4 calls at once, and returns the kernel, with how long that took.
func startAndUse(home string) (*kernel.Kernel, time.Duration, error) {
	began := time.Now()
	k, err := kernel.New(cfg(home))
	if err != nil {
		return nil, 0, err
	}
	if err := k.Start(context.Background()); err != nil {
		return nil, 0, err
	}
	errs := make([]error, len(used))
	var wg sync.WaitGroup
	for i, name := range used {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = k.CallProvider(context.Background(), "plugin/"+name+"/echo", json.RawMessage(`1`))
		}()
	}
	wg.Wait()
	took := time.Since(began)
	for _, err := range errs {
		if err != nil {
			k.Close(context.Background())
			return nil, 0, err
		}
	}
	return k, took, nil
}

// rss returns the resident set size of this process and its children, in
// bytes, from /proc/<pid>/status.
func rss(tb testing.TB) int64 {
	pids, ok := proctest.Children(os.Getpid())
	if !ok {
		tb.Skip("no /proc")
	}
	var total int64
	for _, pid := range append(pids, os.Getpid()) {
		n, err := procstat.RSS(pid)
		if err != nil {
			tb.Fatal(err)
		}
		total += n
	}
	return total
}

// median returns the median of xs (sorted in place).
func median[T int64 | time.Duration](xs []T) T {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// BenchmarkHome64Use4 compares, in each iteration and in rotating order,
// a home of 64 lazy plugins and a home of only 4 eager ones: from
// kernel.New to an answer from each of the 4 (called at once), and the
// resident memory of the host and its plugins then. It reports each
// side's medians and the ratios lazy64/only4 (time) and
// rss-lazy64/rss-only4. A third home, the same 4 plugins lazy, splits
// the time ratio: lazy64/lazy4 is what the 60 members never used cost,
// apart from what starting on first use costs.
//
// In "steady" the samples follow each other with the heap as the last
// one left it, so a collection (on this 2-core machine, one of the two
// cores while it marks) falls in whichever sample crosses the heap goal,
// the harness's own reading of /proc included; in "collected" each sample
// starts after one (runtime.GC, outside the time), as a host's first
// generation starts on a new process's heap, and a sample pays only for
// the collections its own allocations cause.
func BenchmarkHome64Use4(b *testing.B) {
	homes := map[string]string{"only4": home(b, 4, false), "lazy4": home(b, 4, true), "lazy64": home(b, 64, true)}
	for _, mode := range []string{"steady", "collected"} {
		b.Run(mode, func(b *testing.B) { home64Use4(b, homes, mode == "collected") })
	}
}

// home64Use4 is one mode of BenchmarkHome64Use4, collecting the heap
// before each sample when collect is set.
func home64Use4(b *testing.B, homes map[string]string, collect bool) {
	order := []string{"only4", "lazy4", "lazy64"}
	times := map[string][]time.Duration{}
	mem := map[string][]int64{}
	b.ResetTimer()
	for i := range b.N {
		for j := range order {
			side := order[(i+j)%len(order)]
			if collect {
				b.StopTimer()
				runtime.GC()
				b.StartTimer()
			}
			k, took, err := startAndUse(homes[side])
			if err != nil {
				b.Fatalf("%s: %v", side, err)
			}
			b.StopTimer()
			times[side] = append(times[side], took)
			mem[side] = append(mem[side], rss(b))
			if err := k.Close(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.StopTimer()
	t4, t64 := median(times["only4"]), median(times["lazy64"])
	m4, m64 := median(mem["only4"]), median(mem["lazy64"])
	b.ReportMetric(float64(t4.Nanoseconds()), "only4-ns/op")
	b.ReportMetric(float64(t64.Nanoseconds()), "lazy64-ns/op")
	b.ReportMetric(float64(t64)/float64(t4), "lazy64/only4")
	b.ReportMetric(float64(t64)/float64(median(times["lazy4"])), "lazy64/lazy4")
	b.ReportMetric(float64(m4), "rss-only4-bytes")
	b.ReportMetric(float64(m64), "rss-lazy64-bytes")
	b.ReportMetric(float64(m64)/float64(m4), "rss-lazy64/rss-only4")
}

// BenchmarkPublishLazy64 times kernel.New and Start on a home of 64 lazy
// members whose manifests declare their contributions: the generation is
// published with no process started (checked each iteration). The file
// digests are warm (see the warm-up below).
func BenchmarkPublishLazy64(b *testing.B) {
	h := home(b, 64, true)
	ctx := context.Background()
	// One publication first: it digests every package's files (what a
	// fingerprint hashes), once per process, as an eager home's does; the
	// digests are cached by file identity, so a host publishes every
	// generation after its first from the cache.
	if k, err := kernel.New(cfg(h)); err != nil || k.Start(ctx) != nil || k.Close(ctx) != nil {
		b.Fatal("warm-up publication failed")
	}
	b.ResetTimer()
	for range b.N {
		k, err := kernel.New(cfg(h))
		if err != nil {
			b.Fatal(err)
		}
		if err := k.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if kids, _ := proctest.Children(os.Getpid()); len(kids) != 0 {
			b.Fatalf("publishing 64 lazy members started %d processes", len(kids))
		}
		if err := k.Close(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkFirstCall compares, in each iteration and in rotating order, a
// lazy member's first call (its kernel already published, with no
// process: the call starts it) with its floor, the cold start of the same
// plugin through sidecar.Start plus one call. It reports each side's
// median and the ratio lazy/cold.
func BenchmarkFirstCall(b *testing.B) {
	h := home(b, 1, true)
	ctx := context.Background()
	inst, err := pluginpkg.LoadInstalled(h)
	if err != nil {
		b.Fatal(err)
	}
	pkg := inst.Packages[0]
	sides := []func() (time.Duration, error){
		func() (time.Duration, error) { // cold: sidecar.Start + one call
			began := time.Now()
			c, err := sidecar.Start(ctx, pkg, sidecar.Options{Host: protocol.HostInfo{Name: "bench", Version: "1.0.0"},
				Logger: hclog.NewNullLogger(), DataRoot: filepath.Join(h, "data"), HeartbeatInterval: time.Hour})
			if err != nil {
				return 0, err
			}
			_, err = c.Invoke(ctx, "provider/invoke", map[string]any{"ref": "echo", "input": 1})
			took := time.Since(began)
			b.StopTimer()
			defer b.StartTimer()
			return took, errors.Join(err, c.Close(ctx))
		},
		func() (time.Duration, error) { // lazy: the first call starts it
			b.StopTimer()
			k, err := kernel.New(cfg(h))
			if err == nil {
				err = k.Start(ctx)
			}
			if err != nil {
				return 0, err
			}
			b.StartTimer()
			began := time.Now()
			_, err = k.CallProvider(ctx, "plugin/p-00/echo", json.RawMessage(`1`))
			took := time.Since(began)
			b.StopTimer()
			defer b.StartTimer()
			return took, errors.Join(err, k.Close(ctx))
		},
	}
	times := make([][]time.Duration, len(sides))
	b.ResetTimer()
	for i := range b.N {
		for j := range sides {
			k := (i + j) % len(sides)
			took, err := sides[k]()
			if err != nil {
				b.Fatal(err)
			}
			times[k] = append(times[k], took)
		}
	}
	b.StopTimer()
	cold, lazy := median(times[0]), median(times[1])
	b.ReportMetric(float64(cold.Nanoseconds()), "cold-ns/op")
	b.ReportMetric(float64(lazy.Nanoseconds()), "lazy-ns/op")
	b.ReportMetric(float64(lazy)/float64(cold), "lazy/cold")
}

// childHomeEnv names, in the environment of this test binary run as a
// child of BenchmarkHome64Use4Cold, the home it starts a host on; with
// childCollectEnv set, the child collects its heap first.
const (
	childHomeEnv    = "LAZY_BENCH_CHILD_HOME"
	childCollectEnv = "LAZY_BENCH_CHILD_COLLECT"
)

// childStart is this binary as a child of BenchmarkHome64Use4Cold: a new
// process, with none of the module's process-wide caches filled (file
// digests, manifests, listings), as a host is when it starts. It starts a
// kernel on home, calls each used plugin once, writes how long that took
// (in ns) and how many bytes it allocated to stdout, closes the kernel and
// returns the exit code.
func childStart(home string) int {
	if os.Getenv(childCollectEnv) != "" {
		runtime.GC()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	k, took, err := startAndUse(home)
	runtime.ReadMemStats(&after)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := k.Close(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(took.Nanoseconds(), after.TotalAlloc-before.TotalAlloc)
	return 0
}

// BenchmarkHome64Use4Cold is BenchmarkHome64Use4 in a new process per
// sample: each side's kernel starts in a child (this test binary,
// childStart) whose caches are empty, as a host process starts; the time
// is the child's own, from kernel.New to the 4 answers (not its exec).
// The files are in the OS page cache. It reports each side's median time
// and bytes allocated, and the ratio lazy64/only4.
//
// In "collected" each child collects its heap before it starts the
// kernel, as testing.B does before each benchmark; in "as-started" it
// starts with the garbage of the test binary's own start (~2.3 MB), so
// that a side which allocates enough more crosses the first GC trigger
// (a 4 MB heap goal) and pays a collection the other does not.
func BenchmarkHome64Use4Cold(b *testing.B) {
	homes := map[string]string{"only4": home(b, 4, false), "lazy64": home(b, 64, true)}
	for _, mode := range []string{"collected", "as-started"} {
		b.Run(mode, func(b *testing.B) {
			env := append(os.Environ(), childCollectEnv+"=")
			if mode == "collected" {
				env[len(env)-1] += "1"
			}
			coldSamples(b, homes, slices.Clip(env))
		})
	}
}

// coldSamples takes b.N samples of each home in homes, in rotating order,
// each in a child with env, and reports them.
func coldSamples(b *testing.B, homes map[string]string, env []string) {
	order := []string{"only4", "lazy64"}
	times := map[string][]time.Duration{}
	allocs := map[string][]int64{}
	for i := range b.N {
		for j := range order {
			side := order[(i+j)%len(order)]
			cmd := exec.Command(os.Args[0], "-test.run", "^$")
			cmd.Env = append(env, childHomeEnv+"="+homes[side])
			out, err := cmd.Output()
			if err != nil {
				b.Fatalf("%s: child: %v", side, err)
			}
			var ns, bytes int64
			if _, err := fmt.Sscan(string(out), &ns, &bytes); err != nil {
				b.Fatalf("%s: child wrote %q", side, out)
			}
			times[side] = append(times[side], time.Duration(ns))
			allocs[side] = append(allocs[side], bytes)
		}
	}
	b.StopTimer()
	t4, t64 := median(times["only4"]), median(times["lazy64"])
	b.ReportMetric(float64(t4.Nanoseconds()), "only4-ns/op")
	b.ReportMetric(float64(t64.Nanoseconds()), "lazy64-ns/op")
	b.ReportMetric(float64(t64)/float64(t4), "lazy64/only4")
	b.ReportMetric(float64(median(allocs["only4"])), "only4-B/op")
	b.ReportMetric(float64(median(allocs["lazy64"])), "lazy64-B/op")
}
