package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/observe"
)

// crashLoop makes plugin crash through a call at point until supervision
// gives up on it: budget restarts, then failed. It returns the failed
// state's event.
func crashLoop(t *testing.T, k *Kernel, states *stateLog, point contribution.Point, budget int) observe.Event {
	t.Helper()
	for range budget {
		k.Intercept(context.Background(), point, json.RawMessage(`[]`))
		states.expect(t, observe.StateRestarting, observe.StateStarting, observe.StateReady)
	}
	k.Intercept(context.Background(), point, json.RawMessage(`[]`))
	return states.expect(t, observe.StateFailed)
}

// noEvent fails if states holds an event.
func (l *stateLog) noEvent(t *testing.T, what string) {
	t.Helper()
	select {
	case e := <-l.ch:
		t.Errorf("%s: unexpected state event %q (%s)", what, e.State, e.Message)
	default:
	}
}

// TestRestartLeavesFailedNeighboursAlone crash-loops one plugin past its
// budget, then another: the restarts of the second must neither start the
// first again nor touch its state, and no plugin starts more than budget+1
// times between reloads.
func TestRestartLeavesFailedNeighboursAlone(t *testing.T) {
	logA, logB, logS := newSpawnLog(t), newSpawnLog(t), newSpawnLog(t)
	cfg := testConfig(writeHome(t,
		logA.with(plug{name: "alpha", intercepts: []string{"tool.before"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=crash"}}),
		logB.with(plug{name: "bravo", intercepts: []string{"tool.after"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.after=crash"}}),
		logS.with(plug{name: "steady", env: map[string]string{"SCRIPT_PROVIDERS": "get"}}),
	))
	cfg.Supervision = fastSupervision()
	budget := cfg.Supervision.CrashBudget
	k := startKernel(t, cfg)
	alpha, bravo := watchStates(t, k, "alpha"), watchStates(t, k, "bravo")
	steady := clientNamed(k, "steady").ID()

	failed := crashLoop(t, k, alpha, "tool.before", budget)
	crashLoop(t, k, bravo, "tool.after", budget)

	alpha.noEvent(t, "alpha while bravo crash-looped")
	for _, tt := range []struct {
		name string
		log  spawnLog
		want int
	}{{"alpha", logA, budget + 1}, {"bravo", logB, budget + 1}, {"steady", logS, 1}} {
		if n := len(tt.log.pids(t)); n != tt.want {
			t.Errorf("%s started %d times between reloads, want %d", tt.name, n, tt.want)
		}
	}
	st := k.Plugins()
	if st[0].Name != "alpha" || st[0].State != observe.StateFailed || st[0].Reason != failed.Message {
		t.Errorf("alpha's status = %+v, want it still failed with %q", st[0], failed.Message)
	}
	if st[1].State != observe.StateFailed || st[2].State != observe.StateReady {
		t.Errorf("Plugins() = %+v", st)
	}
	if c := clientNamed(k, "steady"); c == nil || c.ID() != steady {
		t.Error("steady was restarted; every restart must adopt it")
	}
	if _, err := k.CallProvider(context.Background(), "plugin/steady/get", json.RawMessage(`1`)); err != nil {
		t.Errorf("call to steady: %v", err)
	}
}

func TestRestartPlugin(t *testing.T) {
	log := newSpawnLog(t)
	cfg := testConfig(writeHome(t, log.with(crashOnCall("crashy")), plug{name: "steady"}))
	cfg.Supervision = fastSupervision()
	k := startKernel(t, cfg)
	states := watchStates(t, k, "crashy")
	crashLoop(t, k, states, "tool.before", cfg.Supervision.CrashBudget)
	before := len(log.pids(t))

	// Past its budget, an explicit restart brings it back with a fresh
	// budget.
	if err := k.RestartPlugin(context.Background(), "crashy"); err != nil {
		t.Fatal(err)
	}
	states.expect(t, observe.StateStarting, observe.StateReady)
	if n := len(log.pids(t)); n != before+1 {
		t.Errorf("%d starts after RestartPlugin, want %d", n, before+1)
	}
	if st := k.Plugins()[0]; st.State != observe.StateReady || st.Restarts != 0 {
		t.Errorf("after RestartPlugin: %+v, want ready with no crashes", st)
	}
	k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
	if e := states.expect(t, observe.StateRestarting); !strings.HasPrefix(e.Message, "crash 1 of 3") {
		t.Errorf("first crash after RestartPlugin: %q, want a fresh budget", e.Message)
	}
	states.expect(t, observe.StateStarting, observe.StateReady)

	// A running plugin is restarted too: a new process, steady adopted.
	replaced := clientNamed(k, "crashy")
	if err := k.RestartPlugin(context.Background(), "crashy"); err != nil {
		t.Fatal(err)
	}
	states.expect(t, observe.StateStarting, observe.StateReady)
	if clientNamed(k, "crashy").ID() == replaced.ID() || !k.Current().Member("steady").Adopted {
		t.Error("RestartPlugin did not replace crashy alone")
	}
	if p := k.Current().Snapshot().Plan; p == nil || mustJSON(t, p.Packages[0].Reasons) != `["restart requested"]` ||
		p.Packages[1].Class != generation.ClassUnchanged {
		t.Errorf("restart plan = %+v", p)
	}
}

func TestRestartPluginErrors(t *testing.T) {
	cfg := testConfig(writeHome(t, plug{name: "steady"}))
	idle, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	k := startKernel(t, cfg)
	closed, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		k      *Kernel
		plugin string
		want   error
	}{
		{"not started", idle, "steady", ErrNotStarted},
		{"closed", closed, "steady", ErrClosed},
		{"unknown plugin", k, "nope", ErrUnknownPlugin},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.k.RestartPlugin(context.Background(), tt.plugin); !errors.Is(err, tt.want) {
				t.Errorf("RestartPlugin = %v, want %v", err, tt.want)
			}
		})
	}
}

// TestFailedReloadLeavesNoStaleStates: a reload that started a replacement
// for a running plugin and then rolled back leaves that plugin ready, not
// starting, and forgets the package it added.
func TestFailedReloadLeavesNoStaleStates(t *testing.T) {
	log := newSpawnLog(t)
	home, plugs := reloadHome(t, log)
	k := startKernel(t, testConfig(home))
	alpha := plugs[0]
	alpha.version = "2.0.0"
	rewrite(t, home, alpha)
	writeHomePackage(t, home, plug{name: "delta", required: true, env: map[string]string{"SCRIPT_START": "exit"}})
	if _, err := k.Reload(context.Background()); err == nil {
		t.Fatal("Reload succeeded; want a rollback")
	}
	st := k.Plugins()
	if len(st) != 3 {
		t.Fatalf("Plugins() = %+v, want alpha, bravo and charlie", st)
	}
	for _, s := range st {
		if s.State != observe.StateReady {
			t.Errorf("%s is %s after the rollback, want ready", s.Name, s.State)
		}
	}
}

// TestAdoptedClientServesOlderCalls: a call in flight on generation 1 goes
// on to its end when its plugin's sidecar, adopted by generation 2, is
// replaced in generation 3: generation 2 (which no call leases) must not
// stop the sidecar while generation 1, which handed it over, still drains.
func TestAdoptedClientServesOlderCalls(t *testing.T) {
	cfg := testConfig(streamHome(t, streamPlug{plug: plug{name: "gen"}, lang: "go"}, streamPlug{plug: plug{name: "other"}, lang: "go"}))
	cfg.StreamWindow = 2 // the producer waits for the consumer
	k := startKernel(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := clientNamed(k, "gen")
	got, err := 0, error(nil)
	for _, err = range k.StreamProvider(ctx, "plugin/gen/count", json.RawMessage(`{"n":20}`)) {
		if err != nil {
			break
		}
		if got++; got == 1 {
			// Generation 2 adopts gen's sidecar; generation 1, retired,
			// waits for this stream. Generation 3 replaces the sidecar:
			// generation 2 retires, with no lease.
			if err := k.RestartPlugin(ctx, "other"); err != nil {
				t.Fatal(err)
			}
			if err := k.RestartPlugin(ctx, "gen"); err != nil {
				t.Fatal(err)
			}
			if g := k.Current(); g.Number() != 3 || clientNamed(k, "gen") == first {
				t.Fatalf("generation %d, gen's sidecar replaced: %v; want 3, replaced", g.Number(), clientNamed(k, "gen") != first)
			}
		}
	}
	if err != nil || got != 20 {
		t.Errorf("the stream ended after %d chunks of 20 with %v, want all of them", got, err)
	}
	select {
	case <-first.Done():
	case <-ctx.Done():
		t.Fatal("the replaced sidecar was not stopped once generation 1 drained")
	}
}
