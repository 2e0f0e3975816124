//go:build unix

package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/internal/builder"
	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/sidecar"
)

var (
	hostileDuration = flag.Duration("hostile.duration", 3*time.Second, "how long TestHostilePlugins attacks")
	hostileSummary  = flag.String("hostile.summary", "", "file to append TestHostilePlugins's summary to")
	hostileOnly     = flag.String("hostile.only", "", "the hostile plugins TestHostilePlugins runs, by name (comma-separated; all when empty)")
)

// hostileHeapBound is what the host's heap (live, and in use without the
// race detector) must stay below while
// the hostile plugins attack (issue 23).
const hostileHeapBound = 256 << 20

// bigData is the size of the data the hostile plugins ask for, per answer
// or chunk: a JSON string that fits a frame (4 MiB) with its envelope.
const bigData = 4_190_000

// hostilePlugs returns the 8 hostile plugins of TestHostilePlugins. Two
// of them are producers the consumers among them call: old (of protocol
// 1.1, stream-windowed) and push (ignoring every window, stream-push).
// The third producer, and the provider of flood-plugin's calls, is big
// (wellBehavedPlugs).
func hostilePlugs() []plug {
	bigInput := fmt.Sprintf(`{"n":1,"size":%d}`, bigData)
	streams := fmt.Sprintf(`{"n":20,"size":%d}`, bigData)
	producers := "big.data:count,old.data:count,push.data:count"
	flood := func(name, call, input string, requires string) plug {
		p := faultyPlug(name, "slow-call-flood", map[string]string{"FAULTY_CALL": call, "FAULTY_INPUT": input,
			"FAULTY_EVERY": "5ms", "FAULTY_READ_EVERY": "100ms"})
		p.requires = []string{requires + " ^1.0?"}
		return p
	}
	return []plug{
		// Item 1: a slow reader flooding calls answered 4 MB each, from
		// the host and from a plugin.
		flood("flood-host", "host.big:get", "", "host.big"),
		flood("flood-plugin", "big.data:get", bigInput, "big.data"),
		// Item 1: relayed streams with the window of 1024 chunks, to a
		// slow and a stalled consumer, from a producer of 1.2 (the
		// SDK), one of 1.1 and one ignoring every window.
		consumerPlug("slow-consumer", producers, streams, "50ms", 0, "big.data", "old.data", "push.data"),
		consumerPlug("stalled-consumer", producers, streams, "stall", 0, "big.data", "old.data", "push.data"),
		producerPlug("old", "stream-windowed", "old.data", map[string]string{"FAULTY_PROTOCOL": "1.1.0"}),
		producerPlug("push", "stream-push", "push.data", nil),
		// Item 2: events of 1 MiB every 10ms.
		faultyPlug("notifier", "notify-paced", map[string]string{"FAULTY_SIZE": "1048576", "FAULTY_EVERY": "10ms"}),
		// Item 3: malformed messages, warnings and stderr lines, and
		// bursts of malformed messages past the limit.
		faultyPlug("garbage", "garbage-flood", map[string]string{"FAULTY_EVERY": "1ms"}),
	}
}

// wellBehavedPlugs returns the well-behaved plugins: wb-a and wb-b (the
// caller plugin; wb-a calls the host and wb-b) and wb-s (the streamer),
// whose calls must keep succeeding, and big (the streamer, providing
// big.data: "get" answers one output of bigData bytes when asked so,
// "count" streams), which the hostile plugins call.
func wellBehavedPlugs() []plug {
	return []plug{
		callerPlug("wb-a", nil, "wb.b ^1.0", "host.log ^1.0"),
		callerPlug("wb-b", []string{"wb.b@1.0.0"}),
		{name: "wb-s", bin: streamerBin},
		{name: "big", bin: streamerBin, provides: []string{"big.data@1.0.0"},
			methods: map[string]map[string]string{"big.data": {"get": "count", "count": "count"}}},
	}
}

// hostileConfig is the kernel's config for TestHostilePlugins: every
// limit at its default, host.log and host.big served by the host (host.big
// answers a copy of bigData bytes made for each call, as a handler reading
// its answer from somewhere would), a crash budget that lets the hostile
// plugins come back for the whole run, and log, the host's log, at info.
func hostileConfig(home string, log *levelLog) config.Config {
	cfg := callConfig(home)
	big := json.RawMessage(`"` + strings.Repeat("b", bigData-2) + `"`)
	cfg.Capabilities = append(cfg.Capabilities, capability.Provided{Key: "host.big", Version: semver.MustParse("1.0.0")})
	cfg.Handlers["host.big"] = func(context.Context, *capability.Call) (json.RawMessage, error) {
		return bytes.Clone(big), nil
	}
	cfg.Supervision = config.Supervision{CrashBudget: 1000, CrashWindow: time.Minute, BackoffMin: 100 * time.Millisecond,
		BackoffMax: time.Second}
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "host", Level: hclog.Info, Output: log})
	return cfg
}

// levelLog counts the bytes and lines of the host's log, by level.
type levelLog struct {
	mu    sync.Mutex
	bytes map[string]int64
	lines map[string]int64
	total int64
}

func newLevelLog() *levelLog {
	return &levelLog{bytes: map[string]int64{}, lines: map[string]int64{}}
}

func (c *levelLog) Write(p []byte) (int, error) {
	level := "other"
	if i := bytes.IndexByte(p, '['); i >= 0 {
		if j := bytes.IndexByte(p[i:], ']'); j > 0 {
			level = string(p[i+1 : i+j])
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes[level] += int64(len(p))
	c.lines[level] += int64(bytes.Count(p, []byte("\n")))
	c.total += int64(len(p))
	return len(p), nil
}

// String sums the log up: its bytes and lines, by level.
func (c *levelLog) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	levels := make([]string, 0, len(c.bytes))
	var lines int64
	for l, n := range c.lines {
		levels = append(levels, l)
		lines += n
	}
	sort.Strings(levels)
	parts := make([]string, len(levels))
	for i, l := range levels {
		parts[i] = fmt.Sprintf("%s %d lines %d bytes", l, c.lines[l], c.bytes[l])
	}
	return fmt.Sprintf("%d bytes in %d lines (%s)", c.total, lines, strings.Join(parts, ", "))
}

// hostileTally counts what the hostile plugins caused, from the kernel's
// events; it keeps counts only, so it stays bounded however many events
// come.
type hostileTally struct {
	mu         sync.Mutex
	notifies   map[string]int64 // by event name
	notifyData int64            // bytes of notify data
	starts     map[string]int64 // by plugin
	ready      map[string]int64 // by plugin: starts that completed the handshake
	crashes    map[string]int64 // by cause: wedged, protocol, other
	streams    map[string]int64 // stream-ended by "capability outcome"
}

func newHostileTally() *hostileTally {
	return &hostileTally{notifies: map[string]int64{}, starts: map[string]int64{}, ready: map[string]int64{},
		crashes: map[string]int64{}, streams: map[string]int64{}}
}

func (h *hostileTally) observe(e observe.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch e.Type {
	case observe.EventNotify:
		h.notifies[e.Name]++
		h.notifyData += int64(len(e.Data))
		if e.Name == "stream-ended" {
			var end streamEnd
			_ = json.Unmarshal(e.Data, &end)
			outcome := "ok"
			switch {
			case end.Error != nil && strings.Contains(end.Error.Message, sidecar.ErrFlowControl.Error()):
				outcome = "flow-control"
			case end.Error != nil:
				outcome = fmt.Sprintf("error %d", end.Error.Code)
			}
			h.streams[end.Capability+" "+outcome]++
		}
	case observe.EventPlugin:
		switch e.State {
		case string(builder.Starting):
			h.starts[e.Plugin]++
		case string(builder.Ready):
			h.ready[e.Plugin]++
		}
	case observe.EventPluginCrashed:
		cause := "other"
		switch {
		case errors.Is(e.Err, sidecar.ErrWedged):
			cause = "wedged"
		case errors.Is(e.Err, sidecar.ErrProtocol):
			cause = "protocol"
		}
		h.crashes[cause]++
	}
}

// readyCount returns how many times plugin completed its handshake.
func (h *hostileTally) readyCount(plugin string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ready[plugin]
}

// counts formats m as "k n, ..." in key order.
func counts(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// wellBehavedCall is one kind of call the well-behaved plugins make or
// serve, over and over: call makes the i-th and checks its outcome.
type wellBehavedCall struct {
	name string
	call func(ctx context.Context, k *Kernel, i int) error
}

// wellBehavedCalls are the calls TestHostilePlugins keeps making: the
// host calling a plugin's provider, a plugin calling the host and
// another plugin (each a provider call of wb-a, whose outcome is its own
// call's), and the host consuming a stream.
var wellBehavedCalls = []wellBehavedCall{
	{"host→plugin", func(ctx context.Context, k *Kernel, i int) error {
		out, err := k.CallProvider(ctx, "plugin/wb-b/run", json.RawMessage(fmt.Sprintf(`{"echo":%d}`, i)))
		if err == nil && !jsonEq(out, fmt.Sprintf(`{"echo":%d}`, i)) {
			err = fmt.Errorf("output %s, want the echo of %d", out, i)
		}
		return err
	}},
	{"plugin→host", func(ctx context.Context, k *Kernel, i int) error {
		o, err := callOf(k.CallProvider(ctx, "plugin/wb-a/run", json.RawMessage(callScript("host.log", "write", fmt.Sprint(i), true))))
		var got struct {
			Caller string
			Input  int
		}
		if err == nil && (json.Unmarshal(o.Output, &got) != nil || got.Caller != "wb-a" || got.Input != i) {
			err = fmt.Errorf("host.log answered %s, want the call of wb-a with input %d", o.Output, i)
		}
		return err
	}},
	{"plugin→plugin", func(ctx context.Context, k *Kernel, i int) error {
		o, err := callOf(k.CallProvider(ctx, "plugin/wb-a/run", json.RawMessage(callScript("wb.b", "run", fmt.Sprintf(`{"echo":%d}`, i), true))))
		if err == nil && !jsonEq(o.Output, fmt.Sprintf(`{"echo":%d}`, i)) {
			err = fmt.Errorf("wb.b answered %s, want the echo of %d", o.Output, i)
		}
		return err
	}},
	{"stream", func(ctx context.Context, k *Kernel, _ int) error {
		got, err := collect(k.StreamProvider(ctx, "plugin/wb-s/count", json.RawMessage(`{"n":8}`)))
		if want := strings.Join(counted(1, 8), " "); err == nil && strings.Join(got, " ") != want {
			err = fmt.Errorf("chunks %q, want %q", got, want)
		}
		return err
	}},
}

// callOf decodes the outcome of the caller plugin's call, as its provider
// answered it: its error is the call's.
func callOf(out json.RawMessage, err error) (callOutcome, error) {
	var o callOutcome
	switch {
	case err != nil:
		return o, err
	case json.Unmarshal(out, &o) != nil:
		return o, fmt.Errorf("outcome %s is not JSON", out)
	case o.Error != nil:
		return o, o.Error
	}
	return o, nil
}

// callRecord is what one kind of well-behaved call did.
type callRecord struct {
	latencies []time.Duration
	failures  map[string]int // by error text
}

// runWellBehaved makes c's calls one after the other until ctx ends.
func runWellBehaved(ctx context.Context, k *Kernel, c wellBehavedCall) *callRecord {
	r := &callRecord{failures: map[string]int{}}
	for i := 0; ctx.Err() == nil; i++ {
		start := time.Now()
		err := c.call(context.Background(), k, i)
		r.latencies = append(r.latencies, time.Since(start))
		if err != nil {
			r.failures[err.Error()]++
		}
	}
	return r
}

// latencySummary returns the p50, p99 and max of ds, sorted in place.
func latencySummary(ds []time.Duration) (p50, p99, top time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ds)
	return ds[len(ds)*50/100], ds[len(ds)*99/100], ds[len(ds)-1]
}

// TestHostilePlugins runs 8 hostile plugins at once for -hostile.duration
// (default 3s; docs/reliability.md records a run of 60s) beside
// well-behaved ones, every limit at its default: two slow readers
// flooding capability/call at providers answering 4 MB each (the host's
// and a plugin's), a slow and a stalled consumer of relayed streams with
// the window of 1024 chunks, fed chunks of 4 MB by a producer of
// protocol 1.2 (the SDK), one of 1.1 and one ignoring every window (both
// among the 8), a plugin sending events of 1 MiB every 10ms, and one
// sending malformed messages, warnings and stderr lines. Meanwhile it
// keeps calling the well-behaved plugins (host to plugin, plugin to host,
// plugin to plugin, a stream) and samples the heap every 50ms. It checks
// that the host's live heap stays below 256 MiB (and its heap in use,
// without the race detector) and that at least 99%
// of the well-behaved calls succeed (reporting every failure), and
// reports their latency, the host's log bytes, the restarts of the
// hostile plugins under their crash budget and what their attacks ended
// with. Every goroutine and process ends with Close (goleak, /proc).
func TestHostilePlugins(t *testing.T) {
	if testing.Short() {
		t.Skip("hostile-plugin check skipped in -short mode")
	}
	log, tally := newLevelLog(), newHostileTally()
	var plugs []plug
	for _, p := range hostilePlugs() {
		if *hostileOnly == "" || slices.Contains(strings.Split(*hostileOnly, ","), p.name) {
			plugs = append(plugs, p)
		}
	}
	home := writeHome(t, append(plugs, wellBehavedPlugs()...)...)
	base, _ := proctest.HeapAfterGC()
	stopHeap := proctest.SampleHeap(50 * time.Millisecond)
	k := startKernelSubscribed(t, hostileConfig(home, log), tally.observe)

	ctx, cancel := context.WithTimeout(context.Background(), *hostileDuration)
	defer cancel()
	records := make([]*callRecord, len(wellBehavedCalls))
	var wg sync.WaitGroup
	for i, c := range wellBehavedCalls {
		wg.Add(1)
		go func() { defer wg.Done(); records[i] = runWellBehaved(ctx, k, c) }()
	}
	wg.Wait()
	closeCtx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	if err := k.Close(closeCtx); err != nil {
		t.Errorf("Close: %v", err)
	}
	peak := stopHeap()
	noChildren(t)
	summary, ok := hostileReport(t, len(plugs), records, peak, base, log, tally)
	t.Log(summary)
	if *hostileSummary != "" {
		if f, err := os.OpenFile(*hostileSummary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, summary)
			f.Close()
		}
	}
	// The heap the host holds (live after a collection) stays below the
	// bound, always. The heap in use also counts the garbage not
	// collected yet, which depends on how far the collector lags behind:
	// under the race detector, on a loaded machine, it lags enough to
	// take that past the bound with what is held well within it (321 MiB
	// in use seen once in a -race run of every package at once), so it is
	// held to the bound without the race detector.
	if peak.Live >= hostileHeapBound {
		t.Errorf("the host's live heap peaked at %s, not below %s", mib(peak.Live), mib(hostileHeapBound))
	}
	if !raceEnabled && peak.InUse >= hostileHeapBound {
		t.Errorf("the host's heap in use peaked at %s, not below %s", mib(peak.InUse), mib(hostileHeapBound))
	}
	if !ok {
		t.Errorf("fewer than 99%% of the well-behaved calls succeeded")
	}
	for _, p := range plugs {
		if tally.readyCount(p.name) == 0 {
			t.Errorf("hostile plugin %q never started: it attacked nothing", p.name)
		}
	}
}

// hostileReport checks the well-behaved calls' records, logging every
// failure, and returns the summary and whether at least 99% succeeded.
func hostileReport(t *testing.T, hostile int, records []*callRecord, peak proctest.HeapPeaks, base uint64, log *levelLog,
	tally *hostileTally) (string, bool) {
	var all []time.Duration
	var calls, failed int
	var kinds []string
	for i, r := range records {
		n, f := len(r.latencies), 0
		for _, msg := range slices.Sorted(maps.Keys(r.failures)) {
			t.Logf("%s: %d calls failed with: %s", wellBehavedCalls[i].name, r.failures[msg], msg)
			f += r.failures[msg]
		}
		p50, p99, top := latencySummary(r.latencies)
		kinds = append(kinds, fmt.Sprintf("%s %d (%d failed; p50 %v, p99 %v, max %v)", wellBehavedCalls[i].name, n, f,
			p50.Round(time.Microsecond), p99.Round(time.Microsecond), top.Round(time.Microsecond)))
		all = append(all, r.latencies...)
		calls, failed = calls+n, failed+f
	}
	p50, p99, top := latencySummary(all)
	tally.mu.Lock()
	defer tally.mu.Unlock()
	var starts int64
	for _, n := range tally.starts {
		starts += n
	}
	restarts := starts - int64(len(tally.starts)) // each plugin's first start is none
	summary := fmt.Sprintf("hostile: %v, %d hostile plugins, every limit at its default: peak heap %s in use, %s allocated, %s live "+
		"(baseline %s, %d samples; bound %s); host log %s; well-behaved calls: %d, %d failed (%.3f%% ok), p50 %v, p99 %v, max %v "+
		"[%s]; starts %d, restarts %d (%s); crashes: %s; relayed streams ended: %s; notify events: %s (%s of data)",
		*hostileDuration, hostile, mib(peak.InUse), mib(peak.Alloc), mib(peak.Live), mib(base), peak.Samples, mib(hostileHeapBound), log,
		calls, failed, 100*float64(calls-failed)/float64(max(calls, 1)), p50.Round(time.Microsecond),
		p99.Round(time.Microsecond), top.Round(time.Microsecond), strings.Join(kinds, "; "), starts, restarts, counts(tally.starts),
		counts(tally.crashes), counts(tally.streams), counts(tally.notifies), mib(uint64(tally.notifyData)))
	return summary, calls > 0 && failed*100 <= calls
}
