package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/sidecar"
)

// TestAbortedPluginsReportedAsConsequences: when a required plugin fails,
// the required plugins stopped with the batch (one mid-handshake, one not
// yet launched) are reported as not started because of it, after it.
func TestAbortedPluginsReportedAsConsequences(t *testing.T) {
	cfg := testConfig(writeHome(t,
		plug{name: "alpha", required: true, env: map[string]string{"SCRIPT_START": "hang"}, handshake: "1m"},
		plug{name: "beta", required: true, env: map[string]string{"SCRIPT_START": "exit"}},
		plug{name: "gamma", required: true},
	))
	cfg.PoolSize = 2
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(context.Background())
	err = k.Start(context.Background())
	var be *generation.BuildError
	if !errors.As(err, &be) {
		t.Fatalf("Start = %v, want a *generation.BuildError", err)
	}
	want := []string{
		`required plugin "beta" failed: plugin "beta": handshake: `,
		`required plugin "alpha" not started: required plugin "beta" failed`,
		`required plugin "gamma" not started: required plugin "beta" failed`,
	}
	if len(be.Problems) != len(want) {
		t.Fatalf("problems = %q, want %d", be.Problems, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(be.Problems[i], w) || i > 0 && be.Problems[i] != w {
			t.Errorf("problems[%d] = %q, want %q", i, be.Problems[i], w)
		}
	}
	if i := slices.IndexFunc(be.Problems, func(p string) bool { return strings.Contains(p, "no answer") }); i >= 0 {
		t.Errorf("an aborted plugin is reported as its own handshake failure: %q", be.Problems[i])
	}
	noChildren(t)
}

// TestProgressShowsPluginsRemovedAfterReady: a plugin reported ready and
// then removed (left out for its declarations, or failed along requires)
// gets a failed progress event saying why.
func TestProgressShowsPluginsRemovedAfterReady(t *testing.T) {
	cfg := testConfig(writeHome(t,
		plug{name: "store", provides: []string{"storage.kv@1.0.0"}, env: map[string]string{"SCRIPT_PROVIDERS": "Bad"}},
		plug{name: "user", requires: []string{"storage.kv ^1.0"}},
	))
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	states := map[string][]string{}
	reasons := map[string]string{}
	k.Subscribe(func(e observe.Event) {
		if e.Type != observe.EventPlugin {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		states[e.Plugin] = append(states[e.Plugin], e.State)
		if e.Err != nil {
			reasons[e.Plugin] = e.Err.Error()
		}
	})
	if err := k.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := k.Close(context.Background()); err != nil {
			t.Error(err)
		}
		noChildren(t)
	}()
	mu.Lock()
	defer mu.Unlock()
	// A start's beginning is a plugin-state event; its outcomes are these.
	want := map[string][]string{"store": {"ready", "failed"}, "user": {"ready", "failed"}}
	if !reflect.DeepEqual(states, want) {
		t.Errorf("progress = %v, want %v", states, want)
	}
	if r := reasons["store"]; !strings.HasPrefix(r, "left out of the generation: provider \"plugin/store/Bad\"") {
		t.Errorf("store's reason = %q", r)
	}
	if r := reasons["user"]; !strings.HasPrefix(r, `requires storage.kv ^1.0, provided by "store", which failed: left out`) {
		t.Errorf("user's reason = %q", r)
	}
}

// TestCurrentCannotStopPlugins: a generation is a value. A host holding
// Current() (or a ReloadResult's Generation) has no method that stops or
// releases a plugin, and using everything it has leaves every plugin
// running: only Kernel.Close stops them.
func TestCurrentCannotStopPlugins(t *testing.T) {
	k := startKernel(t, testConfig(writeHome(t, plug{name: "alpha"}, plug{name: "bravo"})))
	g := k.Current()
	typ := reflect.TypeOf(g)
	for i := range typ.NumMethod() {
		switch name := typ.Method(i).Name; name {
		case "Close", "Release", "Stop", "Kill", "Shutdown":
			t.Errorf("*generation.Generation has a method %s", name)
		}
	}
	before := livePIDs(t, k)
	_ = g.Snapshot()
	_ = g.Warnings()
	_ = g.Registry().All()
	for _, m := range g.Members() {
		_ = m.Status
	}
	if after := livePIDs(t, k); !reflect.DeepEqual(after, before) || len(after) != 2 {
		t.Errorf("plugins after the host used its generation: %v, want the same 2 as before: %v", after, before)
	}
}

// livePIDs returns each plugin's PID as Plugins reports it, checking that
// each one is alive and that together they are exactly the test's child
// processes (no more, no fewer): Plugins agrees with what runs.
func livePIDs(t *testing.T, k *Kernel) map[string]int {
	t.Helper()
	out := map[string]int{}
	var pids []int
	for _, st := range k.Plugins() {
		if st.PID == 0 {
			continue
		}
		if !alive(st.PID) {
			t.Errorf("%s: Plugins reports PID %d (state %s), which is not alive", st.Name, st.PID, st.State)
		}
		out[st.Name] = st.PID
		pids = append(pids, st.PID)
	}
	kids := children(t)
	slices.Sort(pids)
	slices.Sort(kids)
	if !slices.Equal(pids, kids) {
		t.Errorf("Plugins reports PIDs %v, the processes that exist are %v", pids, kids)
	}
	return out
}

// TestPluginsTellTheTruth holds Plugins to the processes that exist after
// start, crash, restart, reload and close: each PID it reports is alive
// and a child of the host, each plugin that runs has one, and a plugin
// that does not run reports none.
func TestPluginsTellTheTruth(t *testing.T) {
	home := writeHome(t, crashOnCall("crashy"), plug{name: "steady"})
	cfg := testConfig(home)
	cfg.Supervision = fastSupervision()
	k := startKernel(t, cfg)
	states := watchStates(t, k, "crashy")
	state := func(name string) observe.PluginStatus {
		for _, st := range k.Plugins() {
			if st.Name == name {
				return st
			}
		}
		t.Fatalf("Plugins() has no %s", name)
		return observe.PluginStatus{}
	}

	started := livePIDs(t, k)
	if len(started) != 2 || state("crashy").State != observe.StateReady || state("steady").State != observe.StateReady {
		t.Fatalf("after start: %v, %+v", started, k.Plugins())
	}

	// crash: the restart runs a new process; the old one is gone.
	k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
	states.expect(t, observe.StateRestarting, observe.StateStarting, observe.StateReady)
	crashed := livePIDs(t, k)
	if crashed["crashy"] == started["crashy"] || alive(started["crashy"]) || crashed["steady"] != started["steady"] {
		t.Errorf("after the crash and its restart: %v (before %v)", crashed, started)
	}

	// restart: the same, asked for.
	replaced := clientNamed(k, "steady")
	if err := k.RestartPlugin(context.Background(), "steady"); err != nil {
		t.Fatal(err)
	}
	stoppedWithin(t, replaced) // once the replaced generation drains
	restarted := livePIDs(t, k)
	if restarted["steady"] == crashed["steady"] || restarted["crashy"] != crashed["crashy"] || alive(crashed["steady"]) {
		t.Errorf("after RestartPlugin(steady): %v (before %v)", restarted, crashed)
	}

	// reload: steady's manifest changes, crashy is adopted.
	rewrite(t, home, plug{name: "steady", version: "1.0.1"})
	replaced = clientNamed(k, "steady")
	if _, err := k.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	stoppedWithin(t, replaced)
	reloaded := livePIDs(t, k)
	if reloaded["steady"] == restarted["steady"] || reloaded["crashy"] != restarted["crashy"] {
		t.Errorf("after the reload: %v (before %v)", reloaded, restarted)
	}
	if alive(restarted["steady"]) {
		t.Errorf("the replaced process %d of steady still runs", restarted["steady"])
	}

	// close: nothing runs, and Plugins says so.
	if err := k.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, st := range k.Plugins() {
		if st.State != observe.StateStopped || st.PID != 0 {
			t.Errorf("after Close: %s is %s with PID %d, want stopped without a process", st.Name, st.State, st.PID)
		}
	}
	if pids := livePIDs(t, k); len(pids) != 0 {
		t.Errorf("after Close: %v", pids)
	}
}

// stoppedWithin waits, within a generous bound, until c's process is
// gone (its client is terminal once the process is reaped).
func stoppedWithin(t *testing.T, c *sidecar.Client) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("%s's replaced process %d was not stopped", c.Name(), c.PID())
	}
}
