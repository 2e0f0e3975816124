//go:build unix

package kernel

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/pluginpkg"
)

var (
	chaosDuration = flag.Duration("chaos.duration", 3*time.Second, "how long TestChaos injects faults")
	chaosPlugins  = flag.Int("chaos.plugins", 6, "how many plugins TestChaos runs")
	chaosCallers  = flag.Int("chaos.callers", 4, "how many goroutines TestChaos dispatches from")
	chaosSummary  = flag.String("chaos.summary", "", "file to append TestChaos's summary line to")
)

const (
	// chaosBudget is the crash budget TestChaos runs with: the real
	// default, so plugins do get failed past it.
	chaosBudget = 3
	// chaosQueueBytes and chaosWindowBytes are the byte budget of each
	// client's queue and the byte window of each stream TestChaos runs
	// with (pluginpkg.ResourceLimits): a quarter of the defaults, so that
	// the heap bound they imply is tight.
	chaosQueueBytes  = 1 << 20
	chaosWindowBytes = 256 << 10
	// chaosHeapMargin is what the host's heap may hold besides what its
	// plugins make it buffer (chaosHeapBound): the test binary, the
	// kernel, its generations and the calls in flight, and the garbage
	// the collector lets grow to as much again as the live heap.
	chaosHeapMargin = 32 << 20
	// chaosLogRate is the log lines a second the host logs for a plugin
	// (pluginpkg.ResourceLimits.LogLinesPerSecond, the default), in
	// bursts of twice as many.
	chaosLogRate = 50
	// chaosLogLine is the longest ordinary line a plugin of TestChaos can
	// make the host log (a flood's line, or a warning about a malformed
	// message, with the logger's prefix: about 250 bytes), and
	// chaosFaultLog the
	// most the host logs about one crash, reload or restart (a crash is
	// logged twice, each time with the plugin's last stderr lines, up to
	// 1 KiB each).
	chaosLogLine  = 512
	chaosFaultLog = 16 << 10
	// chaosWideLine is the most the host logs for a wide line (a log
	// notification or an hclog JSON line of hundreds of KiB): the 16 KiB
	// of the plugin's text a line carries at most, and its prefix.
	chaosWideLine = 16<<10 + chaosLogLine
	// chaosMinSuccess is the share of the calls made between faults that
	// must succeed (see chaosKindStats.between).
	chaosMinSuccess = 0.5
)

// chaosHeapBound is the most the host's heap (runtime.MemStats.HeapInuse)
// may hold while TestChaos runs plugins plugins: each plugin's process
// may have a successor starting while it drains, and each of those two
// clients may make the host hold its queue's byte budget twice (the
// answers to its calls may go past it once), one frame being read (the
// largest frame, wire.DefaultMaxFrame), and a stream window's bytes; the
// rest is chaosHeapMargin.
func chaosHeapBound(plugins int) uint64 {
	perClient := uint64(2*chaosQueueBytes + wire.DefaultMaxFrame + chaosWindowBytes)
	return uint64(2*plugins)*perClient + chaosHeapMargin
}

// chaosLogBound is the most the host may log, in bytes, in a TestChaos
// run of d with plugins plugins, starts sidecar starts, faults crashes,
// reloads and restarts, and wide wide lines sent: every plugin-caused
// line passes the plugin's rate limiter, which lets each sidecar log a
// burst of twice its rate when it starts, then its rate; a plugin may
// have two sidecars at once (one draining, its successor); a wide line
// costs at most chaosWideLine; and the host's own lines are a few per
// fault.
func chaosLogBound(plugins int, d time.Duration, starts, faults, wide int64) int64 {
	const burst = 2 * chaosLogRate * chaosLogLine     // one sidecar's, when it starts
	const perSecond = 2 * chaosLogRate * chaosLogLine // two sidecars of one plugin
	return starts*burst + int64(plugins)*int64(d.Seconds()+1)*perSecond + faults*chaosFaultLog + wide*chaosWideLine
}

// TestChaos runs plugins whose interceptors, providers, actions and
// streams are randomly slow, hang, fail, crash, or write hostile frames,
// some of which flood the host with notify events, malformed messages and
// log lines, while callers dispatch every kind of call continuously: the
// host's intercepts, provider calls, actions and streams, and, through
// plugins, calls to a host handler and to other plugins, call cycles
// and relayed streams, with slow and stalled consumers. Meanwhile a
// killer SIGKILLs random sidecars, a reloader changes manifests
// (sometimes breaking a required one) and reloads, and a medic restarts
// plugins failed past the real crash budget. It checks the invariants
// listed in docs/reliability.md ("The chaos test"): every call returns one
// result or one typed error within its deadlines, a cycle ends in its
// typed error, the generation stays complete, the crash budget holds, no
// stream holds more than its windows, the host's heap and log stay under
// their bounds, most calls made between faults succeed, and nothing
// outlives Close. It stops by itself after -chaos.duration (default 3s).
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test skipped in -short mode")
	}
	faultLog := filepath.Join(t.TempDir(), "faults")
	r := newChaosRig(chaosPlugs(*chaosPlugins, faultLog))
	streamOpened = r.streams.add
	t.Cleanup(func() { streamOpened = nil })
	r.home = writeHome(t, r.plugs...)
	r.heapBase = heapInuse()
	r.k = startKernel(t, r.config())
	unsub := r.k.Subscribe(r.observe)
	defer unsub()

	ctx, cancel := context.WithTimeout(context.Background(), *chaosDuration)
	defer cancel()
	var wg sync.WaitGroup
	for range *chaosCallers {
		wg.Go(func() { r.caller(ctx) })
	}
	for _, fn := range []func(context.Context){r.lag, r.sampleHeap, r.streams.watch, r.killer, r.reloader, r.medic} {
		wg.Go(func() { fn(ctx) })
	}
	wg.Wait()

	unsub()
	mostStarts := r.starts.check(chaosBudget, &r.st)
	late := r.checkLate()
	r.checkClosed()
	if err := r.k.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	r.streams.check(&r.st)
	faults := readFaults(t, faultLog)
	left := leftOrphans(faults.orphans)
	if len(left) > 0 {
		r.st.violate("detached helpers left after Close: %v", left)
	}
	r.checkBounds(faults)
	summary := r.summary(faults, len(left), mostStarts, late)
	t.Log(summary)
	t.Log(r.errorClasses())
	if *chaosSummary != "" {
		f, err := os.OpenFile(*chaosSummary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, summary)
			f.Close()
		}
	}
	if v := r.st.violations.Load(); v > 0 {
		t.Fatalf("%d invariant violations; first: %v", v, r.st.firstViolation.Load())
	}
	r.checkCoverage(t, summary)
}

// config is the kernel's config for the run: short deadlines, fast
// supervision with the real crash budget, the chaos limits, a host
// handler for host.log, and a logger counting what the host logs at info
// and above.
func (r *chaosRig) config() config.Config {
	cfg := testConfig(r.home)
	cfg.Handlers = map[capability.Key]capability.Handler{"host.log": chaosHandler}
	cfg.Deadlines.Intercept = 150 * time.Millisecond
	cfg.Deadlines.Provider = 250 * time.Millisecond
	cfg.Deadlines.Action = 150 * time.Millisecond
	cfg.DrainTimeout = 2 * time.Second
	cfg.Supervision = config.Supervision{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 200 * time.Millisecond,
		HangTimeout: time.Second, CrashBudget: chaosBudget, CrashWindow: time.Minute, BackoffMin: 10 * time.Millisecond,
		BackoffMax: 100 * time.Millisecond}
	cfg.DefaultLimits = pluginpkg.ResourceLimits{QueueBytes: chaosQueueBytes, StreamWindowBytes: chaosWindowBytes,
		LogLinesPerSecond: chaosLogRate}
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "host", Level: hclog.Info, Output: &r.log})
	return cfg
}

// chaosPlugs returns n plugins, every third one required, each with a
// chaotic interceptor, provider, action and stream, the providers through
// which it calls the host and other plugins (SCRIPT_CALLS), and the
// capability chaos.<name> that serves them to the others (methods get,
// cycle and stream); each requires, optionally, the capabilities of its
// two neighbours (a ring: every pair of neighbours is a cycle) and
// host.log. Odd ones may write hostile frames and flood malformed
// messages and stderr lines, even ones flood notify events, log
// notifications and lines of hundreds of KiB, and every third (from the second) may start detached
// helpers. The last one is optional and crashes by itself soon after
// each start, so the crash budget is exhausted between reloads.
func chaosPlugs(n int, faultLog string) []plug {
	var plugs []plug
	for i := range n {
		var faults []string
		if i%2 == 1 {
			faults = append(faults, "hostile")
		}
		floods := []string{"notify,log,wide", "garbage,stderr"}[i%2]
		if i%3 == 1 {
			faults = append(faults, "orphan")
		}
		requires := []string{"host.log ^1.0"}
		for _, j := range chaosNeighbours(i, n) {
			requires = append(requires, fmt.Sprintf("chaos.p%02d ^1.0?", j))
		}
		name := fmt.Sprintf("p%02d", i)
		plugs = append(plugs, plug{name: name, required: i%3 == 0, priority: i, intercepts: []string{"tool.before"},
			provides: []string{"chaos." + name + "@1.0.0"}, requires: requires,
			methods: map[string]map[string]string{"chaos." + name: {"get": "get", "cycle": "cycle", "stream": "stream"}},
			env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=chaos", "SCRIPT_PROVIDERS": "get=chaos",
				"SCRIPT_ACTIONS": "act=chaos", "SCRIPT_CALLS": "1", "SCRIPT_FAULTS": strings.Join(faults, ","),
				"SCRIPT_FLOODS": floods, "SCRIPT_LOG": faultLog}})
	}
	last := &plugs[n-1]
	last.required = false
	last.env["SCRIPT_EXIT_AFTER"] = "30ms"
	return plugs
}

// chaosNeighbours returns the indexes of plugin i's neighbours in a ring
// of n, in order, without i itself.
func chaosNeighbours(i, n int) []int {
	var out []int
	for _, j := range []int{(i + n - 1) % n, (i + 1) % n} {
		if j != i && (len(out) == 0 || out[0] != j) {
			out = append(out, j)
		}
	}
	return out
}
