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

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
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

func (l *eventLog) on(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.starting == nil {
		l.starting = map[string]bool{}
	}
	l.events = append(l.events, e.Plugin+":"+string(e.State))
	switch e.State {
	case StateStarting:
		l.starting[e.Plugin] = true
		l.max = max(l.max, len(l.starting))
	case StateReady, StateFailed:
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

func managerOptions(t *testing.T, events *eventLog) ManagerOptions {
	opts, _ := testOptions(t)
	opts.ShutdownGrace, opts.KillGrace = 500*time.Millisecond, 500*time.Millisecond
	return ManagerOptions{Client: opts, OnEvent: events.on}
}

func names(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Package.Name + ":" + string(r.State)
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

func closeManager(t *testing.T, m *Manager, clients []*Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Errorf("Manager.Close: %v", err)
	}
	if err := m.Close(ctx); err != nil {
		t.Errorf("second Manager.Close: %v", err)
	}
	for _, c := range clients {
		if !errors.Is(c.Err(), ErrClosed) {
			t.Errorf("client %s: Err = %v after Manager.Close, want ErrClosed", c.Name(), c.Err())
		}
	}
	assertNoProcesses(t, pids(clients)...)
}

func TestManagerPoolOrderAndWarnings(t *testing.T) {
	home := t.TempDir()
	pkgs := []*pluginpkg.Package{
		addPackage(t, home, "zeta", goodManifest("zeta", false)),
		addPackage(t, home, "decl", `{"format": 1, "name": "decl", "version": "1.0.0"}`),
		addPackage(t, home, "alpha", goodManifest("alpha", true)),
		addPackage(t, home, "broken", faultyManifest("broken", "exit-early", false)),
		addPackage(t, home, "mid", goodManifest("mid", false)),
		addPackage(t, home, "beta", goodManifest("beta", false)),
		addPackage(t, home, "gamma", goodManifest("gamma", false)),
	}
	events := new(eventLog)
	opts := managerOptions(t, events)
	opts.PoolSize = 2
	m := NewManager(opts)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	b, err := m.Start(ctx, pkgs)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer closeManager(t, m, b.Clients)

	want := []string{"zeta:ready", "decl:skipped", "alpha:ready", "broken:failed", "mid:ready", "beta:ready", "gamma:ready"}
	if got := names(b.Results); !slices.Equal(got, want) {
		t.Errorf("results = %v, want %v", got, want)
	}
	if !b.Results[1].Declarative || b.Results[1].Client != nil || !b.Results[2].Required || b.Results[0].Required {
		t.Errorf("declarative or required flags wrong: %+v", b.Results)
	}
	var got []string
	for _, c := range b.Clients {
		got = append(got, c.Name())
	}
	if want := []string{"zeta", "alpha", "mid", "beta", "gamma"}; !slices.Equal(got, want) {
		t.Errorf("clients = %v, want %v", got, want)
	}
	var se *StartError
	if len(b.Warnings) != 1 || b.Warnings[0].Plugin != "broken" || !errors.As(b.Warnings[0].Err, &se) ||
		!strings.HasPrefix(b.Warnings[0].String(), `plugin "broken": handshake: plugin "broken" exited unexpectedly (exit status 3)`) {
		t.Errorf("warnings = %v, want one naming broken", b.Warnings)
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

// TestManagerBudgetIsShared starts six plugins that never answer, with a
// per-plugin handshake timeout far beyond the batch budget: the two the
// pool launches fail when the shared budget runs out, the other four are
// never launched.
func TestManagerBudgetIsShared(t *testing.T) {
	home := t.TempDir()
	var pkgs []*pluginpkg.Package
	for i := range 6 {
		name := fmt.Sprintf("stall-%d", i)
		pkgs = append(pkgs, addPackage(t, home, name, faultyManifest(name, "no-handshake", false)))
	}
	events := new(eventLog)
	opts := managerOptions(t, events)
	opts.PoolSize, opts.Budget = 2, time.Second
	opts.Client.HandshakeTimeout = time.Minute
	m := NewManager(opts)
	b, err := m.Start(context.Background(), pkgs)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer closeManager(t, m, b.Clients)
	if len(b.Warnings) != 6 || len(b.Clients) != 0 {
		t.Fatalf("warnings = %v, clients = %d; want 6 warnings", b.Warnings, len(b.Clients))
	}
	for i, r := range b.Results {
		if r.State != StateFailed || !errors.Is(r.Err, ErrBudgetExhausted) {
			t.Errorf("%s: %s %v, want failed on the budget", r.Package.Name, r.State, r.Err)
			continue
		}
		var se *StartError
		launched := errors.As(r.Err, &se) && se.Phase == PhaseHandshake
		if i < 2 && !launched {
			t.Errorf("%s: %v, want a handshake failure", r.Package.Name, r.Err)
		}
		if i >= 2 && r.Err.Error() != "startup budget exhausted before launch" {
			t.Errorf("%s: %v, want \"startup budget exhausted before launch\"", r.Package.Name, r.Err)
		}
	}
	if got := events.pluginEvents("stall-5"); !slices.Equal(got, []string{"failed"}) {
		t.Errorf("stall-5 events = %v, want only failed", got)
	}
	assertNoProcesses(t)
}

// TestManagerRequiredFailure checks that a required failure fails the
// batch with a *RequiredStartError, cancels a plugin still starting, and
// closes every client the batch started.
func TestManagerRequiredFailure(t *testing.T) {
	home := t.TempDir()
	pkgs := []*pluginpkg.Package{
		addPackage(t, home, "ok", goodManifest("ok", false)),
		addPackage(t, home, "stall", faultyManifest("stall", "no-handshake", false)),
		addPackage(t, home, "needed", faultyManifest("needed", "exit-early", true)),
	}
	events := new(eventLog)
	opts := managerOptions(t, events)
	opts.Client.HandshakeTimeout = time.Minute
	opts.Budget = time.Minute
	m := NewManager(opts)
	b, err := m.Start(context.Background(), pkgs)
	var rse *RequiredStartError
	if !errors.As(err, &rse) {
		t.Fatalf("err = %v, want a *RequiredStartError", err)
	}
	var failed []string
	for _, r := range rse.Failures {
		failed = append(failed, r.Package.Name)
	}
	if !slices.Equal(failed, []string{"needed"}) {
		t.Errorf("required failures = %v, want [needed]", failed)
	}
	if !strings.Contains(err.Error(), `plugin "needed": handshake: plugin "needed" exited unexpectedly (exit status 3)`) {
		t.Errorf("err = %v, want it to name needed and its cause", err)
	}
	stall := b.Results[1]
	var ae *AbortedError
	if stall.State != StateFailed || !errors.As(stall.Err, &ae) || ae.Required != "needed" ||
		stall.Err.Error() != `not started: required plugin "needed" failed` {
		t.Errorf("stall = %s %v, want aborted by needed's failure", stall.State, stall.Err)
	}
	for _, c := range b.Clients {
		if !errors.Is(c.Err(), ErrClosed) {
			t.Errorf("client %s not closed: %v", c.Name(), c.Err())
		}
	}
	assertNoProcesses(t, pids(b.Clients)...)
}

// TestManagerRequiredOverride checks that the policy function overrides the
// manifest's runtime.required both ways.
func TestManagerRequiredOverride(t *testing.T) {
	home := t.TempDir()
	pkgs := []*pluginpkg.Package{
		addPackage(t, home, "demoted", faultyManifest("demoted", "exit-early", true)),
		addPackage(t, home, "promoted", faultyManifest("promoted", "exit-early", false)),
	}
	opts := managerOptions(t, new(eventLog))
	opts.PoolSize = 1 // demoted fails before promoted starts: no cancellation
	opts.Required = func(p *pluginpkg.Package) bool { return p.Name == "promoted" }
	b, err := NewManager(opts).Start(context.Background(), pkgs)
	var rse *RequiredStartError
	if !errors.As(err, &rse) || len(rse.Failures) != 1 || rse.Failures[0].Package.Name != "promoted" {
		t.Fatalf("err = %v, want a *RequiredStartError for promoted only", err)
	}
	if len(b.Warnings) != 1 || b.Warnings[0].Plugin != "demoted" {
		t.Errorf("warnings = %v, want demoted", b.Warnings)
	}
	assertNoProcesses(t)
}

func TestStartByName(t *testing.T) {
	home := t.TempDir()
	addPackage(t, home, "app", `{"format": 1, "name": "app", "version": "1.0.0",
  "runtime": {"command": "./good", "env": {"GOOD_PROVIDES": ""}, "intercepts": ["tool.before"], "replaces": ["context.compactor"]},
  "requires": [{"capability": "test.echo", "version": "^1.0"}, {"capability": "host.log", "version": "^1.0"}]}`)
	addPackage(t, home, "echo", goodManifest("echo", false))
	addPackage(t, home, "other", `{"format": 1, "name": "other", "version": "1.0.0",
  "runtime": {"command": "./good", "env": {"GOOD_PROVIDES": "other.cap@1.0.0"}, "intercepts": ["tool.before"], "replaces": ["context.compactor"]},
  "provides": [{"capability": "other.cap", "version": "1.0.0"}]}`)
	inst, err := pluginpkg.LoadInstalled(home)
	if err != nil || len(inst.Warnings) > 0 {
		t.Fatalf("LoadInstalled: %v %v", err, inst.Warnings)
	}
	host := []capability.Provided{{Key: "host.log", Version: semver.MustParse("1.2.0")}}
	events := new(eventLog)
	m := NewManager(managerOptions(t, events))
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()

	if _, err := m.StartByName(ctx, inst, nil, "app"); err == nil || !strings.Contains(err.Error(), "host.log") {
		t.Errorf("without the host capability: err = %v, want a resolution error naming host.log", err)
	}
	b, err := m.StartByName(ctx, inst, host, "app")
	if err != nil {
		t.Fatal(err)
	}
	defer closeManager(t, m, b.Clients)
	if got, want := names(b.Results), []string{"app:ready", "echo:ready"}; !slices.Equal(got, want) {
		t.Errorf("results = %v, want %v", got, want)
	}
	if got := events.pluginEvents("other"); got != nil {
		t.Errorf("other was not requested, yet: %v", got)
	}
}

func TestManagerClosed(t *testing.T) {
	m := NewManager(ManagerOptions{})
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(context.Background(), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
}

// TestStartByNameCascade checks that a provider's failure fails the plugins
// that require its capability, closing them, while a plugin that needs it
// only optionally keeps running with a warning.
func TestStartByNameCascade(t *testing.T) {
	for _, required := range []bool{false, true} {
		t.Run(fmt.Sprintf("required=%t", required), func(t *testing.T) {
			home := t.TempDir()
			addPackage(t, home, "app", fmt.Sprintf(`{"format": 1, "name": "app", "version": "1.0.0",
  "runtime": {"command": "./good", "required": %t, "env": {"GOOD_PROVIDES": ""}, "intercepts": ["tool.before"], "replaces": ["context.compactor"]},
  "requires": [{"capability": "test.echo", "version": "^1.0"}]}`, required))
			addPackage(t, home, "echo", `{"format": 1, "name": "echo", "version": "1.0.0",
  "runtime": {"command": "./faulty", "args": ["exit-early"]},
  "provides": [{"capability": "test.echo", "version": "1.0.0"}]}`)
			addPackage(t, home, "lenient", `{"format": 1, "name": "lenient", "version": "1.0.0",
  "runtime": {"command": "./good", "env": {"GOOD_PROVIDES": ""}, "intercepts": ["tool.before"], "replaces": ["context.compactor"]},
  "requires": [{"capability": "test.echo", "version": "^1.0", "optional": true}]}`)
			inst, err := pluginpkg.LoadInstalled(home)
			if err != nil || len(inst.Warnings) > 0 {
				t.Fatalf("LoadInstalled: %v %v", err, inst.Warnings)
			}
			events := new(eventLog)
			m := NewManager(managerOptions(t, events))
			b, err := m.StartByName(context.Background(), inst, nil, "app", "lenient")
			if got, want := names(b.Results), []string{"app:failed", "echo:failed", "lenient:ready"}; !slices.Equal(got, want) {
				t.Errorf("results = %v, want %v", got, want)
			}
			var de *DependencyError
			if !errors.As(b.Results[0].Err, &de) || de.Provider != "echo" || de.Capability != "test.echo" {
				t.Errorf("app: %v, want a *DependencyError on echo", b.Results[0].Err)
			}
			var rse *RequiredStartError
			if required != errors.As(err, &rse) {
				t.Errorf("err = %v, want a RequiredStartError: %t", err, required)
			}
			if !required {
				var got []string
				for _, w := range b.Warnings {
					got = append(got, w.Plugin)
				}
				if want := []string{"lenient", "app", "echo"}; !slices.Equal(got, want) {
					t.Errorf("warnings from %v, want %v:\n%v", got, want, b.Warnings)
				}
				defer closeManager(t, m, b.Clients)
			}
			if got := events.pluginEvents("app"); len(got) != 3 || got[2] != "failed" {
				t.Errorf("app events = %v, want starting, ready, failed", got)
			}
		})
	}
	assertNoProcesses(t)
}
