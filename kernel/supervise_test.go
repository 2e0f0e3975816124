package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/sidecar"
)

// stateLog collects EventPluginState events of one plugin.
type stateLog struct {
	ch chan observe.Event
}

func watchStates(t *testing.T, k *Kernel, plugin string) *stateLog {
	l := &stateLog{ch: make(chan observe.Event, 64)}
	unsub := k.Subscribe(func(e observe.Event) {
		if e.Type == observe.EventPluginState && e.Plugin == plugin {
			l.ch <- e
		}
	})
	t.Cleanup(unsub)
	return l
}

// expect waits for the given states in order (other states may come in
// between only where listed) and returns the last event.
func (l *stateLog) expect(t *testing.T, states ...observe.PluginState) observe.Event {
	t.Helper()
	var last observe.Event
	for _, want := range states {
		select {
		case e := <-l.ch:
			if observe.PluginState(e.State) != want {
				t.Fatalf("state %q (%s), want %q", e.State, e.Message, want)
			}
			last = e
		case <-time.After(30 * time.Second):
			t.Fatalf("no %q state event", want)
		}
	}
	return last
}

// until waits for the state want, skipping other states, and returns its
// event.
func (l *stateLog) until(t *testing.T, want observe.PluginState) observe.Event {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case e := <-l.ch:
			if observe.PluginState(e.State) == want {
				return e
			}
		case <-deadline:
			t.Fatalf("no %q state event", want)
		}
	}
}

func fastSupervision() config.Supervision {
	return config.Supervision{HeartbeatInterval: time.Hour, CrashBudget: 3, CrashWindow: time.Minute,
		BackoffMin: time.Millisecond, BackoffMax: 10 * time.Millisecond}
}

func crashOnCall(name string) plug {
	return plug{name: name, intercepts: []string{"tool.before"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=crash"}}
}

func TestCrashRestartsThroughANewGeneration(t *testing.T) {
	cfg := testConfig(writeHome(t, crashOnCall("crashy"), plug{name: "steady"}))
	cfg.Supervision = fastSupervision()
	k := startKernel(t, cfg)
	states := watchStates(t, k, "crashy")
	first := k.Current()
	oldID := clientNamed(k, "crashy").ID()
	steadyID := clientNamed(k, "steady").ID()

	k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
	states.expect(t, observe.StateRestarting, observe.StateStarting, observe.StateReady)
	g := k.Current()
	if g.Number() != first.Number()+1 {
		t.Fatalf("generation %d after the restart, want %d", g.Number(), first.Number()+1)
	}
	if c := clientNamed(k, "crashy"); c == nil || c.ID() == oldID {
		t.Fatalf("crashy was not restarted with a new process")
	}
	if clientNamed(k, "steady").ID() != steadyID || !g.Member("steady").Adopted {
		t.Error("steady was restarted; it must be adopted")
	}
	snap := g.Snapshot()
	if snap.Plan == nil || len(snap.Plan.Packages) != 2 ||
		snap.Plan.Packages[0].Reasons[0] != "not running in generation 1 (crashed)" {
		t.Errorf("restart plan = %+v", snap.Plan)
	}
	if st := k.Plugins(); len(st) != 2 || st[0].Name != "crashy" || st[0].State != observe.StateReady || st[0].Restarts != 1 {
		t.Errorf("Plugins() = %+v", st)
	}
}

func TestCrashBudget(t *testing.T) {
	cfg := testConfig(writeHome(t, crashOnCall("crashy")))
	cfg.Supervision = fastSupervision()
	k := startKernel(t, cfg)
	states := watchStates(t, k, "crashy")
	for i := range 3 {
		k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
		e := states.expect(t, observe.StateRestarting)
		if want := "crash " + string(rune('1'+i)) + " of 3 allowed within 1m0s"; !strings.HasPrefix(e.Message, want) {
			t.Errorf("restart reason %q, want prefix %q", e.Message, want)
		}
		states.expect(t, observe.StateStarting, observe.StateReady)
	}
	k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
	e := states.expect(t, observe.StateFailed)
	if !strings.HasPrefix(e.Message, "crashed 4 times within 1m0s (budget 3); not restarting until an explicit restart or a reload that changes the package") {
		t.Errorf("failed reason = %q", e.Message)
	}
	st := k.Plugins()[0]
	if st.State != observe.StateFailed || len(st.Stderr) == 0 && st.Reason == "" {
		t.Errorf("status = %+v", st)
	}
	if st.PID != 0 {
		t.Errorf("PID = %d for a plugin failed past its crash budget, want 0", st.PID)
	}
	// It stays failed: calls skip it (optional) ...
	res, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
	if err != nil || res.Steps[0].Decision != DecisionSkipped {
		t.Fatalf("call to a failed optional plugin: %+v, %v", res, err)
	}
	// ... and a reload that does not change its package leaves it so
	// (TestReloadKeepsCrashLoopDown); RestartPlugin retries it
	// (TestRestartPlugin).
	if r, err := k.Reload(context.Background()); err != nil || r.Published {
		t.Fatalf("Reload = %+v, %v; want nothing to do", r, err)
	}
	states.noEvent(t, "after a reload without changes")
}

// TestReloadKeepsCrashLoopDown runs a plugin that crashes by itself soon
// after every start, required or optional, until it is failed past its
// budget. A reload that does not change its package, even one that
// reloads a neighbour, must not start it again nor reset its budget; a
// reload that changes it starts it with a fresh budget. An optional plugin
// that failed to start is still retried by every reload.
func TestReloadKeepsCrashLoopDown(t *testing.T) {
	for _, required := range []bool{false, true} {
		t.Run(map[bool]string{false: "optional", true: "required"}[required], func(t *testing.T) {
			loopLog, startLog := newSpawnLog(t), newSpawnLog(t)
			loop := loopLog.with(plug{name: "loop", required: required, intercepts: []string{"tool.before"},
				env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=continue", "SCRIPT_EXIT_AFTER": "100ms"}})
			neighbour := plug{name: "neighbour", env: map[string]string{"SCRIPT_PROVIDERS": "get"}}
			broken := startLog.with(plug{name: "broken", env: map[string]string{"SCRIPT_START": "exit"}})
			home := writeHome(t, loop, neighbour, broken)
			cfg := testConfig(home)
			cfg.Supervision = fastSupervision()
			budget := cfg.Supervision.CrashBudget
			k := startKernel(t, cfg)
			states := watchStates(t, k, "loop")
			// A crash may come before or after the restarted plugin is
			// published (and reported ready), the first one even before
			// states was subscribed: its starts are counted below.
			failed := states.until(t, observe.StateFailed)

			neighbour.version = "1.0.1"
			rewrite(t, home, neighbour)
			for i := range 2 { // the neighbour's change, then only broken's retry
				r, err := k.Reload(context.Background())
				if err != nil || !r.Published {
					t.Fatalf("reload %d = %+v, %v", i, r, err)
				}
				c := planChange(r.Plan, "loop")
				if c.Class != generation.ClassUnchanged || len(c.Reasons) != 1 || !strings.HasSuffix(c.Reasons[0], "kept down: "+heldReason) {
					t.Errorf("reload %d planned loop as %+v, want it unchanged and kept down", i, c)
				}
				if c := planChange(r.Plan, "broken"); c.Class != generation.ClassReloaded {
					t.Errorf("reload %d planned broken as %+v, want it retried", i, c)
				}
				if n := len(startLog.pids(t)); n != i+2 {
					t.Errorf("broken started %d times after reload %d, want %d", n, i, i+2)
				}
			}
			states.noEvent(t, "reloads that left loop alone")
			if n := len(loopLog.pids(t)); n != budget+1 {
				t.Errorf("loop started %d times, want %d", n, budget+1)
			}
			if st := k.Plugins()[1]; st.Name != "loop" || st.State != observe.StateFailed || st.Reason != failed.Message {
				t.Errorf("loop's status = %+v, want it failed with %q", st, failed.Message)
			}
			checkFailedCall(t, k, required)

			loop.version = "1.0.1"
			rewrite(t, home, loop)
			r, err := k.Reload(context.Background())
			if err != nil || planChange(r.Plan, "loop").Class != generation.ClassReloaded {
				t.Fatalf("reload of a changed loop = %+v, %v", r, err)
			}
			if e := states.until(t, observe.StateRestarting); !strings.HasPrefix(e.Message, "crash 1 of 3") {
				t.Errorf("first crash after a reload that changed loop: %q, want a fresh budget", e.Message)
			}
		})
	}
}

// planChange returns the change of name in p.
func planChange(p *generation.Plan, name string) generation.Change {
	for _, c := range p.Packages {
		if c.Name == name {
			return c
		}
	}
	return generation.Change{}
}

// checkFailedCall checks a call to the failed plugin "loop": an optional one
// is skipped, a required one fails the call closed with a *PluginError.
func checkFailedCall(t *testing.T, k *Kernel, required bool) {
	t.Helper()
	res, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
	var pe *PluginError
	switch {
	case required && (!errors.As(err, &pe) || pe.Plugin != "loop" || !pe.Required):
		t.Errorf("call to a failed required plugin: %v, want a *PluginError naming loop", err)
	case !required && (err != nil || res.Steps[0].Decision != DecisionSkipped):
		t.Errorf("call to a failed optional plugin: %+v, %v, want it skipped", res, err)
	}
}

// TestStaleRestartLeavesExhaustedPluginDown: a restart scheduled before a
// reload (or RestartPlugin) started a plugin afresh may fire after the
// plugin crashed its new budget away; it must not start it again.
func TestStaleRestartLeavesExhaustedPluginDown(t *testing.T) {
	log := newSpawnLog(t)
	cfg := testConfig(writeHome(t, log.with(crashOnCall("crashy"))))
	cfg.Supervision = fastSupervision()
	k := startKernel(t, cfg)
	states := watchStates(t, k, "crashy")
	failed := crashLoop(t, k, states, "tool.before", cfg.Supervision.CrashBudget)
	before := len(log.pids(t))

	k.restart(context.Background(), "crashy") // as a stale scheduled restart would
	states.noEvent(t, "a stale restart")
	if n := len(log.pids(t)); n != before {
		t.Errorf("a stale restart started crashy: %d starts, want %d", n, before)
	}
	if st := k.Plugins()[0]; st.State != observe.StateFailed || st.Reason != failed.Message {
		t.Errorf("after a stale restart: %+v, want failed with %q", st, failed.Message)
	}
}

func TestStaleCallbacksAreIgnored(t *testing.T) {
	cfg := testConfig(writeHome(t, crashOnCall("crashy")))
	cfg.Supervision = fastSupervision()
	k := startKernel(t, cfg)
	states := watchStates(t, k, "crashy")
	old := clientNamed(k, "crashy")
	k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
	states.expect(t, observe.StateRestarting, observe.StateStarting, observe.StateReady)
	g := k.Current()

	// Late reports from the replaced process change nothing.
	k.health(old, false)
	k.crashed(old, &sidecar.CrashError{Plugin: "crashy", ExitStatus: "exit status 1"})
	k.super.stop() // waits for any restart a stale report might have scheduled
	if k.Current() != g {
		t.Error("a stale crash report replaced the generation")
	}
	if st := k.Plugins()[0]; st.State != observe.StateReady || st.Restarts != 1 {
		t.Errorf("after stale reports: %+v", st)
	}
	select {
	case e := <-states.ch:
		t.Errorf("a stale report caused a state event: %+v", e)
	default:
	}
}

func TestOptionalStartFailureIsFailedState(t *testing.T) {
	cfg := testConfig(writeHome(t, plug{name: "broken", env: map[string]string{"SCRIPT_START": "exit"}}, plug{name: "fine"}))
	k := startKernel(t, cfg)
	st := k.Plugins()
	if len(st) != 2 || st[0].Name != "broken" || st[0].State != observe.StateFailed || !strings.Contains(st[0].Reason, "exit status 3") ||
		st[1].State != observe.StateReady {
		t.Errorf("Plugins() = %+v", st)
	}
	if m := k.Current().Member("broken"); m.Status != generation.StatusFailed {
		t.Errorf("member status %s", m.Status)
	}
}

func TestBackoff(t *testing.T) {
	for _, tt := range []struct {
		crashes int
		want    time.Duration
	}{{1, 100 * time.Millisecond}, {2, 200 * time.Millisecond}, {3, 400 * time.Millisecond}, {6, time.Second}} {
		if got := backoff(100*time.Millisecond, time.Second, tt.crashes); got != tt.want {
			t.Errorf("backoff(%d) = %v, want %v", tt.crashes, got, tt.want)
		}
	}
}

// TestPluginsReportPID holds that a host reads a plugin's process ID from
// Plugins, now that the generation's clients are the kernel's alone: the
// running plugin's live PID, zero for one that failed to start.
func TestPluginsReportPID(t *testing.T) {
	cfg := testConfig(writeHome(t, plug{name: "broken", env: map[string]string{"SCRIPT_START": "exit"}}, plug{name: "fine"}))
	k := startKernel(t, cfg)
	byName := map[string]observe.PluginStatus{}
	for _, st := range k.Plugins() {
		byName[st.Name] = st
	}
	tests := []struct {
		plugin  string
		running bool
	}{
		{"broken", false},
		{"fine", true},
	}
	for _, tt := range tests {
		st, ok := byName[tt.plugin]
		if !ok {
			t.Fatalf("Plugins() has no %s", tt.plugin)
		}
		if !tt.running {
			if st.PID != 0 {
				t.Errorf("%s: PID %d, want 0 (not running)", tt.plugin, st.PID)
			}
			continue
		}
		if want := clientNamed(k, tt.plugin).PID(); st.PID != want || st.PID <= 0 || !alive(st.PID) {
			t.Errorf("%s: PID %d, want the live process %d", tt.plugin, st.PID, want)
		}
	}
}
