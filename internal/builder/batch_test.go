//go:build unix

package builder

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/plugintest"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

// eventLog records a batch's events and the most plugins seen starting at
// once.
type eventLog struct {
	mu       sync.Mutex
	events   []string
	starting map[string]bool
	max      int
}

func (l *eventLog) on(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.starting == nil {
		l.starting = map[string]bool{}
	}
	l.events = append(l.events, e.Plugin+":"+string(e.State))
	switch e.State {
	case Starting:
		l.starting[e.Plugin] = true
		l.max = max(l.max, len(l.starting))
	case Ready, Failed:
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
func batchSpecs(pkgs []*pluginpkg.Package, cancel ...string) []spec {
	specs := make([]spec, len(pkgs))
	for i, p := range pkgs {
		specs[i] = spec{pkg: p, opts: testOptions(), cancelBatchOnFailure: slices.Contains(cancel, p.Name)}
	}
	return specs
}

func names(os []outcome) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.plugin + ":" + string(o.state)
	}
	return out
}

// ready returns the clients of the ready outcomes, in order.
func ready(os []outcome) []*sidecar.Client {
	var out []*sidecar.Client
	for _, o := range os {
		if o.client != nil {
			out = append(out, o.client)
		}
	}
	return out
}

// closeBatch closes the clients a batch started and checks that none is
// left behind.
func closeBatch(t *testing.T, clients []*sidecar.Client) {
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
		if !errors.Is(c.Err(), sidecar.ErrClosed) {
			t.Errorf("client %s: Err = %v after CloseAll, want ErrClosed", c.Name(), c.Err())
		}
	}
	assertNoProcesses(t)
}

// TestStartBatchPoolOrder checks outcomes in spec order, the pool bound,
// and that a failure without cancelBatchOnFailure cancels nothing.
func TestStartBatchPoolOrder(t *testing.T) {
	home := t.TempDir()
	pkgs := []*pluginpkg.Package{
		addPackage(t, home, "zeta", plugintest.GoodManifest("zeta", false)),
		addPackage(t, home, "alpha", plugintest.GoodManifest("alpha", true)),
		addPackage(t, home, "broken", plugintest.FaultyManifest("broken", "exit-early", true)),
		addPackage(t, home, "mid", plugintest.GoodManifest("mid", false)),
		addPackage(t, home, "beta", plugintest.GoodManifest("beta", false)),
		addPackage(t, home, "gamma", plugintest.GoodManifest("gamma", false)),
	}
	events := new(eventLog)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	out := startBatch(ctx, batchSpecs(pkgs), batchOptions{poolSize: 2, budget: DefaultBudget, onEvent: events.on})
	defer closeBatch(t, ready(out))

	want := []string{"zeta:ready", "alpha:ready", "broken:failed", "mid:ready", "beta:ready", "gamma:ready"}
	if got := names(out); !slices.Equal(got, want) {
		t.Errorf("outcomes = %v, want %v", got, want)
	}
	var got []string
	for _, c := range ready(out) {
		got = append(got, c.Name())
	}
	if want := []string{"zeta", "alpha", "mid", "beta", "gamma"}; !slices.Equal(got, want) {
		t.Errorf("clients = %v, want %v", got, want)
	}
	var se *sidecar.StartError
	if !errors.As(out[2].err, &se) ||
		!strings.HasPrefix(out[2].err.Error(), `plugin "broken": handshake: plugin "broken" exited unexpectedly (exit status 3)`) {
		t.Errorf("broken: %v, want its handshake failure", out[2].err)
	}
	if events.max > 2 || events.max < 1 {
		t.Errorf("at most %d plugins started at once, want 1..2 (pool size 2)", events.max)
	}
	if got := events.pluginEvents("broken"); !slices.Equal(got, []string{"starting", "failed"}) {
		t.Errorf("broken events = %v", got)
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
		pkgs = append(pkgs, addPackage(t, home, name, plugintest.FaultyManifest(name, "no-handshake", false)))
	}
	events := new(eventLog)
	specs := batchSpecs(pkgs)
	for i := range specs {
		specs[i].opts.HandshakeTimeout = time.Minute
	}
	out := startBatch(context.Background(), specs, batchOptions{poolSize: 2, budget: time.Second, onEvent: events.on})
	defer closeBatch(t, ready(out))
	for i, o := range out {
		if o.state != Failed || !errors.Is(o.err, ErrBudgetExhausted) {
			t.Errorf("%s: %s %v, want failed on the budget", o.plugin, o.state, o.err)
			continue
		}
		var se *sidecar.StartError
		launched := errors.As(o.err, &se) && se.Phase == "handshake"
		if i < 2 && !launched {
			t.Errorf("%s: %v, want a handshake failure", o.plugin, o.err)
		}
		if i >= 2 && o.err.Error() != "startup budget exhausted before launch" {
			t.Errorf("%s: %v, want \"startup budget exhausted before launch\"", o.plugin, o.err)
		}
	}
	if got := events.pluginEvents("stall-5"); !slices.Equal(got, []string{"failed"}) {
		t.Errorf("stall-5 events = %v, want only failed", got)
	}
	assertNoProcesses(t)
}

// TestStartBatchCancelOnFailure checks that the failure of a spec marked
// cancelBatchOnFailure cancels a plugin still starting and one not yet
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
				addPackage(t, home, "needed", plugintest.FaultyManifest("needed", "exit-early", false)),
				addPackage(t, home, "stall", plugintest.FaultyManifest("stall", "no-handshake", false)),
				addPackage(t, home, "late", plugintest.GoodManifest("late", false)),
			}
			specs := batchSpecs(pkgs, tt.cancel...)
			specs[1].opts.HandshakeTimeout = tt.stall
			// Pool size 2: late waits for needed's slot, freed only after
			// needed's failure cancelled the batch (if marked).
			out := startBatch(context.Background(), specs, batchOptions{poolSize: 2, budget: time.Minute})
			defer closeBatch(t, ready(out))
			if got := names(out); !slices.Equal(got, tt.want) {
				t.Fatalf("outcomes = %v, want %v", got, tt.want)
			}
			if !strings.Contains(out[0].err.Error(), `plugin "needed": handshake: plugin "needed" exited unexpectedly (exit status 3)`) {
				t.Errorf("needed: %v, want its own handshake failure", out[0].err)
			}
			var ae *AbortedError
			if tt.cancel == nil {
				if errors.As(out[1].err, &ae) {
					t.Errorf("stall = %v, want its own failure, not an abort", out[1].err)
				}
				return
			}
			for _, o := range out[1:] {
				if !errors.As(o.err, &ae) || ae.CancelledBy != "needed" || ae.Plugin != o.plugin ||
					o.err.Error() != `not started: required plugin "needed" failed` {
					t.Errorf("%s = %v, want aborted by needed's failure", o.plugin, o.err)
				}
			}
		})
	}
	assertNoProcesses(t)
}
