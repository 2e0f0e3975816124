package kernel

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/sidecar"
)

// stateLog collects EventPluginState events of one plugin.
type stateLog struct {
	ch chan Event
}

func watchStates(t *testing.T, k *Kernel, plugin string) *stateLog {
	l := &stateLog{ch: make(chan Event, 64)}
	unsub := k.Subscribe(func(e Event) {
		if e.Type == EventPluginState && e.Plugin == plugin {
			l.ch <- e
		}
	})
	t.Cleanup(unsub)
	return l
}

// expect waits for the given states in order (other states may come in
// between only where listed) and returns the last event.
func (l *stateLog) expect(t *testing.T, states ...State) Event {
	t.Helper()
	var last Event
	for _, want := range states {
		select {
		case e := <-l.ch:
			if State(e.State) != want {
				t.Fatalf("state %q (%s), want %q", e.State, e.Message, want)
			}
			last = e
		case <-time.After(30 * time.Second):
			t.Fatalf("no %q state event", want)
		}
	}
	return last
}

func fastSupervision() Supervision {
	return Supervision{HeartbeatInterval: time.Hour, CrashBudget: 3, CrashWindow: time.Minute,
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
	oldID := first.Client("crashy").ID()
	steadyID := first.Client("steady").ID()

	k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
	states.expect(t, StateRestarting, StateStarting, StateReady)
	g := k.Current()
	if g.Number() != first.Number()+1 {
		t.Fatalf("generation %d after the restart, want %d", g.Number(), first.Number()+1)
	}
	if c := g.Client("crashy"); c == nil || c.ID() == oldID {
		t.Fatalf("crashy was not restarted with a new process")
	}
	if g.Client("steady").ID() != steadyID || !g.Member("steady").Adopted {
		t.Error("steady was restarted; it must be adopted")
	}
	snap := g.Snapshot()
	if snap.Plan == nil || len(snap.Plan.Packages) != 2 ||
		snap.Plan.Packages[0].Reasons[0] != "not running in generation 1 (crashed)" {
		t.Errorf("restart plan = %+v", snap.Plan)
	}
	if st := k.Plugins(); len(st) != 2 || st[0].Plugin != "crashy" || st[0].State != StateReady || st[0].Crashes != 1 {
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
		e := states.expect(t, StateRestarting)
		if want := "crash " + string(rune('1'+i)) + " of 3 allowed within 1m0s"; !strings.HasPrefix(e.Message, want) {
			t.Errorf("restart reason %q, want prefix %q", e.Message, want)
		}
		states.expect(t, StateStarting, StateReady)
	}
	k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
	e := states.expect(t, StateFailed)
	if !strings.HasPrefix(e.Message, "crashed 4 times within 1m0s (budget 3); not restarting until an explicit restart or reload") {
		t.Errorf("failed reason = %q", e.Message)
	}
	st := k.Plugins()[0]
	if st.State != StateFailed || len(st.Stderr) == 0 && st.Reason == "" {
		t.Errorf("status = %+v", st)
	}
	// It stays failed: calls skip it (optional) ...
	res, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
	if err != nil || res.Steps[0].Decision != DecisionSkipped {
		t.Fatalf("call to a failed optional plugin: %+v, %v", res, err)
	}
	// ... until an explicit reload retries it.
	if _, err := k.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	states.expect(t, StateStarting, StateReady)
	if k.Current().Client("crashy") == nil {
		t.Error("reload did not bring crashy back")
	}
}

func TestStaleCallbacksAreIgnored(t *testing.T) {
	cfg := testConfig(writeHome(t, crashOnCall("crashy")))
	cfg.Supervision = fastSupervision()
	k := startKernel(t, cfg)
	states := watchStates(t, k, "crashy")
	oldID := k.Current().Client("crashy").ID()
	k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
	states.expect(t, StateRestarting, StateStarting, StateReady)
	g := k.Current()

	// Late reports from the replaced process change nothing.
	k.health("crashy", oldID, sidecar.Unresponsive)
	k.crashed(&sidecar.CrashError{Plugin: "crashy", ExitStatus: "exit status 1", ClientID: oldID})
	k.super.stop() // waits for any restart a stale report might have scheduled
	if k.Current() != g {
		t.Error("a stale crash report replaced the generation")
	}
	if st := k.Plugins()[0]; st.State != StateReady || st.Crashes != 1 {
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
	if len(st) != 2 || st[0].Plugin != "broken" || st[0].State != StateFailed || !strings.Contains(st[0].Reason, "exit status 3") ||
		st[1].State != StateReady {
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
