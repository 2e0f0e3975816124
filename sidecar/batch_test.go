//go:build unix

package sidecar

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/pluginpkg"
)

// eventLog records a batch's events and the most plugins seen starting at
// once.
type eventLog struct {
	mu       sync.Mutex
	events   []string
	starting map[string]bool
	max      int
}

func (l *eventLog) on(e StartEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.starting == nil {
		l.starting = map[string]bool{}
	}
	l.events = append(l.events, e.Plugin+":"+string(e.State))
	switch e.State {
	case StartLaunching:
		l.starting[e.Plugin] = true
		l.max = max(l.max, len(l.starting))
	case StartReady, StartFailed:
		delete(l.starting, e.Plugin)
	}
}

// pluginEvents returns the states plugin went through, in order.
func (l *eventLog) pluginEvents(plugin string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		if name, state, _ := strings.Cut(e, ":"); name == plugin {
			out = append(out, state)
		}
	}
	return out
}

// batchSpecs returns one spec per package, with the test's client options;
// cancel marks the specs whose failure cancels the batch.
func batchSpecs(t *testing.T, pkgs []*pluginpkg.Package, cancel ...string) []Spec {
	opts, _ := testOptions(t)
	opts.ShutdownGrace, opts.KillGrace = 500*time.Millisecond, 500*time.Millisecond
	specs := make([]Spec, len(pkgs))
	for i, p := range pkgs {
		specs[i] = Spec{Plugin: PluginOf(p), Options: opts, CancelBatchOnFailure: slices.Contains(cancel, p.Name)}
	}
	return specs
}

func names(os []Outcome) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.Plugin + ":" + string(o.State)
	}
	return out
}

// ready returns the clients of the ready outcomes, in order.
func ready(os []Outcome) []*Client {
	var out []*Client
	for _, o := range os {
		if o.Client != nil {
			out = append(out, o.Client)
		}
	}
	return out
}

func pids(cs []*Client) []int {
	out := make([]int, len(cs))
	for i, c := range cs {
		out[i] = c.PID()
	}
	return out
}

// closeBatch closes the clients a batch started and checks that none is
// left behind.
func closeBatch(t *testing.T, clients []*Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := CloseAll(ctx, clients); err != nil {
		t.Errorf("CloseAll: %v", err)
	}
	if err := CloseAll(ctx, clients); err != nil {
		t.Errorf("second CloseAll: %v", err)
	}
	for _, c := range clients {
		if !errors.Is(c.Err(), ErrClosed) {
			t.Errorf("client %s: Err = %v after CloseAll, want ErrClosed", c.Name(), c.Err())
		}
	}
	assertNoProcesses(t, pids(clients)...)
}

// TestStartBatchPoolOrder checks outcomes in spec order, the pool bound,
// a skipped declarative package, and that a failure without
// CancelBatchOnFailure cancels nothing.
func TestStartBatchPoolOrder(t *testing.T) {
	home := t.TempDir()
	pkgs := []*pluginpkg.Package{
		addPackage(t, home, "zeta", goodManifest("zeta", false)),
		addPackage(t, home, "decl", `{"format": 1, "name": "decl", "version": "1.0.0"}`),
		addPackage(t, home, "alpha", goodManifest("alpha", true)),
		addPackage(t, home, "broken", faultyManifest("broken", "exit-early", true)),
		addPackage(t, home, "mid", goodManifest("mid", false)),
		addPackage(t, home, "beta", goodManifest("beta", false)),
		addPackage(t, home, "gamma", goodManifest("gamma", false)),
	}
	events := new(eventLog)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	out := StartBatch(ctx, batchSpecs(t, pkgs), BatchOptions{PoolSize: 2, OnEvent: events.on})
	defer closeBatch(t, ready(out))

	want := []string{"zeta:ready", "decl:skipped", "alpha:ready", "broken:failed", "mid:ready", "beta:ready", "gamma:ready"}
	if got := names(out); !slices.Equal(got, want) {
		t.Errorf("outcomes = %v, want %v", got, want)
	}
	if out[1].Client != nil || out[1].Err != nil {
		t.Errorf("declarative outcome = %+v, want no client and no error", out[1])
	}
	var got []string
	for _, c := range ready(out) {
		got = append(got, c.Name())
	}
	if want := []string{"zeta", "alpha", "mid", "beta", "gamma"}; !slices.Equal(got, want) {
		t.Errorf("clients = %v, want %v", got, want)
	}
	var se *StartError
	if !errors.As(out[3].Err, &se) ||
		!strings.HasPrefix(out[3].Err.Error(), `plugin "broken": handshake: plugin "broken" exited unexpectedly (exit status 3)`) {
		t.Errorf("broken: %v, want its handshake failure", out[3].Err)
	}
	if events.max > 2 || events.max < 1 {
		t.Errorf("at most %d plugins started at once, want 1..2 (pool size 2)", events.max)
	}
	if got := events.pluginEvents("broken"); !slices.Equal(got, []string{"starting", "failed"}) {
		t.Errorf("broken events = %v", got)
	}
	if got := events.pluginEvents("decl"); !slices.Equal(got, []string{"skipped"}) {
		t.Errorf("decl events = %v", got)
	}
}

// TestStartBatchBudgetIsShared starts six plugins that never answer, with a
// per-plugin handshake timeout far beyond the batch budget: the two the
// pool launches fail when the shared budget runs out, the other four are
// never launched.
func TestStartBatchBudgetIsShared(t *testing.T) {
	home := t.TempDir()
	var pkgs []*pluginpkg.Package
	for i := range 6 {
		name := fmt.Sprintf("stall-%d", i)
		pkgs = append(pkgs, addPackage(t, home, name, faultyManifest(name, "no-handshake", false)))
	}
	events := new(eventLog)
	specs := batchSpecs(t, pkgs)
	for i := range specs {
		specs[i].Options.HandshakeTimeout = time.Minute
	}
	out := StartBatch(context.Background(), specs, BatchOptions{PoolSize: 2, Budget: time.Second, OnEvent: events.on})
	defer closeBatch(t, ready(out))
	for i, o := range out {
		if o.State != StartFailed || !errors.Is(o.Err, ErrBudgetExhausted) {
			t.Errorf("%s: %s %v, want failed on the budget", o.Plugin, o.State, o.Err)
			continue
		}
		var se *StartError
		launched := errors.As(o.Err, &se) && se.Phase == PhaseHandshake
		if i < 2 && !launched {
			t.Errorf("%s: %v, want a handshake failure", o.Plugin, o.Err)
		}
		if i >= 2 && o.Err.Error() != "startup budget exhausted before launch" {
			t.Errorf("%s: %v, want \"startup budget exhausted before launch\"", o.Plugin, o.Err)
		}
	}
	if got := events.pluginEvents("stall-5"); !slices.Equal(got, []string{"failed"}) {
		t.Errorf("stall-5 events = %v, want only failed", got)
	}
	assertNoProcesses(t)
}

// TestStartBatchCancelOnFailure checks that the failure of a spec marked
// CancelBatchOnFailure cancels a plugin still starting and one not yet
// launched, each failing with an *AbortedError naming it; without the mark
// a failure cancels nothing.
func TestStartBatchCancelOnFailure(t *testing.T) {
	tests := []struct {
		name   string
		cancel []string
		stall  time.Duration // stall's handshake timeout
		want   []string
	}{
		{name: "marked", cancel: []string{"needed"}, stall: time.Minute,
			want: []string{"needed:failed", "stall:failed", "late:failed"}},
		{name: "unmarked", stall: time.Second,
			want: []string{"needed:failed", "stall:failed", "late:ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			pkgs := []*pluginpkg.Package{
				addPackage(t, home, "needed", faultyManifest("needed", "exit-early", false)),
				addPackage(t, home, "stall", faultyManifest("stall", "no-handshake", false)),
				addPackage(t, home, "late", goodManifest("late", false)),
			}
			specs := batchSpecs(t, pkgs, tt.cancel...)
			specs[1].Options.HandshakeTimeout = tt.stall
			// Pool size 2: late waits for needed's slot, freed only after
			// needed's failure cancelled the batch (if marked).
			out := StartBatch(context.Background(), specs, BatchOptions{PoolSize: 2, Budget: time.Minute})
			defer closeBatch(t, ready(out))
			if got := names(out); !slices.Equal(got, tt.want) {
				t.Fatalf("outcomes = %v, want %v", got, tt.want)
			}
			if !strings.Contains(out[0].Err.Error(), `plugin "needed": handshake: plugin "needed" exited unexpectedly (exit status 3)`) {
				t.Errorf("needed: %v, want its own handshake failure", out[0].Err)
			}
			var ae *AbortedError
			if tt.cancel == nil {
				if errors.As(out[1].Err, &ae) {
					t.Errorf("stall = %v, want its own failure, not an abort", out[1].Err)
				}
				return
			}
			for _, o := range out[1:] {
				if !errors.As(o.Err, &ae) || ae.CancelledBy != "needed" || ae.Plugin != o.Plugin ||
					o.Err.Error() != `not started: plugin "needed" failed and cancelled the batch` {
					t.Errorf("%s = %v, want aborted by needed's failure", o.Plugin, o.Err)
				}
			}
		})
	}
	assertNoProcesses(t)
}
