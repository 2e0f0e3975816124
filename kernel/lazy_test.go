package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/builder"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
)

// lazyPlug is a scripted package that declares, in its manifest, the
// providers it serves (runtime.contributes), and appends its pid to
// pidfile at each start.
func lazyPlug(name, pidfile string, providers ...string) plug {
	return plug{name: name, contributes: map[string][]string{"provider": providers},
		env: map[string]string{"SCRIPT_PROVIDERS": strings.Join(providers, ","), "SCRIPT_PIDFILE": pidfile}}
}

// spawns counts the starts recorded in pidfile.
func spawns(t testing.TB, pidfile string) int {
	t.Helper()
	data, err := os.ReadFile(pidfile)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(strings.Fields(string(data)))
}

// lazyConfig is testConfig with every package lazy.
func lazyConfig(home string) config.Config {
	cfg := testConfig(home)
	cfg.Activation.Default = pluginpkg.ActivationLazy
	return cfg
}

// startLazyKernel starts a kernel of cfg and closes it at the end of the test,
// checking that no child process is left behind.
func startLazyKernel(t *testing.T, cfg config.Config) *Kernel {
	t.Helper()
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		noChildren(t)
	})
	return k
}

// pluginState returns plugin's status in k.
func pluginState(t *testing.T, k *Kernel, plugin string) observe.PluginStatus {
	t.Helper()
	for _, p := range k.Plugins() {
		if p.Name == plugin {
			return p
		}
	}
	t.Fatalf("no status for %q", plugin)
	return observe.PluginStatus{}
}

// TestLazyPublishesDeclaredAndStartsOnFirstUse: a generation of lazy
// members publishes their declared providers with no process; the first
// call starts the one it needs, and only that one; status says what
// activated it.
func TestLazyPublishesDeclaredAndStartsOnFirstUse(t *testing.T) {
	dir := t.TempDir()
	pids := map[string]string{}
	var plugs []plug
	for _, name := range []string{"alpha", "beta", "gamma"} {
		pids[name] = filepath.Join(dir, name+".pid")
		plugs = append(plugs, lazyPlug(name, pids[name], "echo", "search.web"))
	}
	k := startLazyKernel(t, lazyConfig(writeHome(t, plugs...)))
	if kids := children(t); len(kids) != 0 {
		t.Fatalf("a generation of lazy members started %d processes", len(kids))
	}
	g := k.Current()
	for _, name := range []string{"alpha", "beta", "gamma"} {
		if m := g.Member(name); m.Status != generation.StatusDeclared {
			t.Errorf("%s: status %q, want declared", name, m.Status)
		}
		if _, ok := g.Registry().Provider("plugin/" + name + "/search.web"); !ok {
			t.Errorf("%s: its declared provider search.web is not published", name)
		}
		if st := pluginState(t, k, name); st.State != observe.StateDeclared || st.Activation != "lazy" || st.PID != 0 {
			t.Errorf("%s: state %q activation %q pid %d, want declared, lazy, none", name, st.State, st.Activation, st.PID)
		}
	}
	out, err := k.CallProvider(context.Background(), "plugin/beta/echo", json.RawMessage(`{"x":1}`))
	if err != nil || string(out) != `{"x":1}` {
		t.Fatalf("first call: %s, %v", out, err)
	}
	if n := spawns(t, pids["beta"]); n != 1 {
		t.Errorf("beta started %d times, want 1", n)
	}
	for _, name := range []string{"alpha", "gamma"} {
		if n := spawns(t, pids[name]); n != 0 {
			t.Errorf("%s started %d times by a call to beta", name, n)
		}
	}
	st := pluginState(t, k, "beta")
	if st.State != observe.StateReady || st.PID == 0 || st.Lazy == nil {
		t.Fatalf("beta after its first call: %+v", st)
	}
	if !strings.Contains(st.Lazy.ActivatedBy, "provider plugin/beta/echo by host") || st.Lazy.Activations != 1 ||
		st.Lazy.StartDuration <= 0 || st.Lazy.FirstCall < st.Lazy.StartDuration || st.Lazy.Declarations != builder.OriginManifest {
		t.Errorf("beta's activation: %+v", *st.Lazy)
	}
	if z := st.Lazy; z.SpawnDuration <= 0 || z.HandshakeDuration <= 0 || z.SpawnDuration+z.HandshakeDuration != z.StartDuration {
		t.Errorf("beta's start split: spawn %v + handshake %v, start %v", z.SpawnDuration, z.HandshakeDuration, z.StartDuration)
	}
	if s := k.Current().Snapshot(); s.Packages[1].Name != "beta" || s.Packages[1].Activation != "lazy" {
		t.Errorf("snapshot: %+v", s.Packages[1])
	}
}

// TestLazySingleFlight: 100 concurrent first calls share one start.
func TestLazySingleFlight(t *testing.T) {
	pid := filepath.Join(t.TempDir(), "p.pid")
	k := startLazyKernel(t, lazyConfig(writeHome(t, lazyPlug("solo", pid, "echo"))))
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := json.RawMessage(`{"i":` + strings.Repeat("1", 1+i%3) + `}`)
			out, err := k.CallProvider(context.Background(), "plugin/solo/echo", in)
			if err == nil && string(out) != string(in) {
				err = errors.New("answer " + string(out) + " to " + string(in))
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := spawns(t, pid); n != 1 {
		t.Errorf("100 concurrent first calls spawned %d processes, want 1", n)
	}
}

// TestLazyStartFailure: a lazy member that cannot start fails the call
// that needed it with the reason, counts against the crash budget, and
// past it is held down: later calls fail at once, without a spawn.
func TestLazyStartFailure(t *testing.T) {
	pid := filepath.Join(t.TempDir(), "p.pid")
	p := lazyPlug("broken", pid, "echo")
	p.required = true
	p.env["SCRIPT_START"] = "exit"
	cfg := lazyConfig(writeHome(t, p))
	cfg.Supervision = config.Supervision{HeartbeatInterval: time.Hour, CrashBudget: 2, CrashWindow: time.Minute,
		BackoffMin: time.Millisecond, BackoffMax: time.Millisecond}
	k := startLazyKernel(t, cfg) // required, but lazy: the build does not start it
	for i := 1; i <= 3; i++ {
		_, err := k.CallProvider(context.Background(), "plugin/broken/echo", nil)
		var pe *PluginError
		if !errors.As(err, &pe) || !errors.Is(err, ErrPluginDown) || !pe.Required || !strings.Contains(err.Error(), "broken") {
			t.Fatalf("call %d: %v, want a required PluginError wrapping ErrPluginDown", i, err)
		}
		st := pluginState(t, k, "broken")
		want := observe.StateDeclared
		if i == 3 {
			want = observe.StateFailed
		}
		if st.State != want || st.Restarts != i {
			t.Errorf("after call %d: state %q, %d crashes (%s); want %q, %d", i, st.State, st.Restarts, st.Reason, want, i)
		}
	}
	_, err := k.CallProvider(context.Background(), "plugin/broken/echo", nil)
	if err == nil || !strings.Contains(err.Error(), "(budget 2); not restarting") {
		t.Errorf("a call past the crash budget: %v", err)
	}
	if n := spawns(t, pid); n != 3 {
		t.Errorf("%d spawns, want 3: none once it is held down", n)
	}
}

// TestLazyDriftFromManifest: a handshake that declares a provider the
// manifest does not is drift, reported with its field path; the member is
// failed, and the call that started it fails with the reason.
func TestLazyDriftFromManifest(t *testing.T) {
	pid := filepath.Join(t.TempDir(), "p.pid")
	p := lazyPlug("drifty", pid, "echo")
	p.env["SCRIPT_PROVIDERS"] = "echo,extra"
	k := startLazyKernel(t, lazyConfig(writeHome(t, p)))
	_, err := k.CallProvider(context.Background(), "plugin/drifty/echo", nil)
	var de *builder.DriftError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), `handshake.providers["extra"]: declared, but not published`) {
		t.Fatalf("call: %v, want drift naming handshake.providers[\"extra\"]", err)
	}
	if st := pluginState(t, k, "drifty"); st.State != observe.StateFailed || !strings.Contains(st.Reason, "extra") {
		t.Errorf("state %q (%s), want failed naming the drift", st.State, st.Reason)
	}
	if _, err := k.CallProvider(context.Background(), "plugin/drifty/echo", nil); !errors.As(err, &de) {
		t.Errorf("a second call: %v, want the drift again, without a start", err)
	}
	if n := spawns(t, pid); n != 1 {
		t.Errorf("%d starts, want 1", n)
	}
}

// TestLazyDeclarationCache: a lazy member without declarations is started
// by its first build to learn them, which writes the cache; the next
// kernel publishes it from the cache with no process. A cache whose
// declarations no longer match what the plugin declares is drift.
func TestLazyDeclarationCache(t *testing.T) {
	pid := filepath.Join(t.TempDir(), "p.pid")
	p := plug{name: "learner", env: map[string]string{"SCRIPT_PROVIDERS": "echo", "SCRIPT_PIDFILE": pid}}
	home := writeHome(t, p)
	cfg := lazyConfig(home)
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := pluginState(t, k, "learner"); st.State != observe.StateReady || st.Lazy.Declarations != builder.OriginHandshake {
		t.Errorf("first kernel: %+v, want ready, learned from its handshake", st)
	}
	if err := k.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(home, "state", "declarations", "learner.json")
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("no cache entry: %v", err)
	}

	k = startLazyKernel(t, cfg)
	if m := k.Current().Member("learner"); m.Status != generation.StatusDeclared {
		t.Fatalf("second kernel: status %q, want declared from the cache", m.Status)
	}
	if n := spawns(t, pid); n != 1 {
		t.Errorf("%d starts after the second kernel's start, want 1 (the first kernel's)", n)
	}
	if _, ok := k.Current().Registry().Provider("plugin/learner/echo"); !ok {
		t.Error("the cached provider is not published")
	}
	if err := k.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The plugin now declares something else than its cache entry says
	// (as one whose behaviour depends on what the host cannot see).
	var entry map[string]any
	data, _ := os.ReadFile(cache)
	if err := json.Unmarshal(data, &entry); err != nil {
		t.Fatal(err)
	}
	entry["declarations"].(map[string]any)["providers"] = []any{map[string]any{"ref": "echo"}, map[string]any{"ref": "ghost"}}
	writeJSON(t, cache, entry)
	k3, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer k3.Close(context.Background())
	if err := k3.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = k3.CallProvider(context.Background(), "plugin/learner/echo", nil)
	if err == nil || !strings.Contains(err.Error(), `handshake.providers["ghost"]: published, but not declared`) {
		t.Errorf("call after the cache drifted: %v", err)
	}
}

// TestEagerHeldToContributes: an eager member whose manifest lists its
// providers is held to them: an optional one that declares another is
// left out, with the field path.
func TestEagerHeldToContributes(t *testing.T) {
	p := lazyPlug("eager", filepath.Join(t.TempDir(), "p.pid"), "echo")
	p.env["SCRIPT_PROVIDERS"] = "echo,extra"
	k := startLazyKernel(t, testConfig(writeHome(t, p)))
	m := k.Current().Member("eager")
	if m.Status != generation.StatusFailed || !strings.Contains(m.Reason, `handshake.providers["extra"]`) {
		t.Errorf("status %q (%s), want failed for the undeclared provider", m.Status, m.Reason)
	}
}

// TestLazyIdleStopNeverLosesACall: 10,000 calls, in bursts whose pauses
// land around the idle deadline, none failed; the member was stopped for
// being idle and started again, each a bounded number of times (at most
// one stop per pause, one start per stop and the first).
func TestLazyIdleStopNeverLosesACall(t *testing.T) {
	pid := filepath.Join(t.TempDir(), "p.pid")
	cfg := lazyConfig(writeHome(t, lazyPlug("idler", pid, "echo")))
	const idle = 20 * time.Millisecond
	cfg.Activation.IdleTimeout = idle
	k := startLazyKernel(t, cfg)
	const calls, workers = 10000, 8
	pauses := 0
	var failed int
	var mu sync.Mutex
	for sent := 0; sent < calls; {
		burst := min(250, calls-sent)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < burst; i += workers {
					if _, err := k.CallProvider(context.Background(), "plugin/idler/echo", json.RawMessage(`1`)); err != nil {
						mu.Lock()
						failed++
						if failed <= 3 {
							t.Errorf("call failed: %v", err)
						}
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		sent += burst
		// Pause around the deadline: just before, at, just after.
		time.Sleep(idle + time.Duration(pauses%5-2)*2*time.Millisecond)
		pauses++
	}
	st := pluginState(t, k, "idler")
	if failed > 0 {
		t.Fatalf("%d of %d calls failed", failed, calls)
	}
	stops, starts := st.Lazy.IdleStops, st.Lazy.Activations
	t.Logf("%d calls in %d bursts: %d idle stops, %d starts, %d spawns", calls, pauses, stops, starts, spawns(t, pid))
	if starts != stops+1 && starts != stops {
		t.Errorf("%d starts for %d idle stops, want one more (or as many, when the last stop came after the last call)", starts, stops)
	}
	if stops > pauses || starts > pauses+1 || spawns(t, pid) != starts {
		t.Errorf("%d stops and %d starts (%d spawns) for %d pauses: unbounded", stops, starts, spawns(t, pid), pauses)
	}
	if stops == 0 {
		t.Error("the member was never stopped for being idle")
	}
}

// TestLazyReloadAdoptsSlot: a reload that leaves a lazy member unchanged
// keeps its process (and its slot); one that makes it eager restarts it
// as an eager member.
func TestLazyReloadAdoptsSlot(t *testing.T) {
	pid := filepath.Join(t.TempDir(), "p.pid")
	home := writeHome(t, lazyPlug("keeper", pid, "echo"), lazyPlug("other", filepath.Join(t.TempDir(), "o.pid"), "echo"))
	cfg := lazyConfig(home)
	k := startLazyKernel(t, cfg)
	if _, err := k.CallProvider(context.Background(), "plugin/keeper/echo", json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	before := pluginState(t, k, "keeper").PID
	// A change of another package: keeper is unchanged.
	writeJSON(t, filepath.Join(home, "packages", "other", "plugin.json"), manifest(plug{name: "other", version: "1.1.0",
		contributes: map[string][]string{"provider": {"echo"}}, env: map[string]string{"SCRIPT_PROVIDERS": "echo"}}))
	res, err := k.Reload(context.Background())
	if err != nil || !res.Published {
		t.Fatalf("reload: %v, %+v", err, res)
	}
	if st := pluginState(t, k, "keeper"); st.PID != before || st.State != observe.StateReady {
		t.Errorf("keeper after the reload: pid %d state %q, want its process %d kept", st.PID, st.State, before)
	}
	if _, err := k.CallProvider(context.Background(), "plugin/keeper/echo", json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	if n := spawns(t, pid); n != 1 {
		t.Errorf("keeper spawned %d times, want 1", n)
	}
	if st := pluginState(t, k, "other"); st.State != observe.StateDeclared {
		t.Errorf("other after its upgrade: %q, want declared", st.State)
	}
}

// TestLazyStartedByPluginCall: another plugin's capability/call starts a
// lazy provider (relayed by the kernel on a call worker, not the caller's
// reader), and an explicit start request (RestartPlugin of a declared
// member) starts one.
func TestLazyStartedByPluginCall(t *testing.T) {
	memory := callerPlug("memory", nil, "storage.kv ^1.0")
	kvstore := callerPlug("kvstore", []string{"storage.kv@1.2.0"})
	kvstore.contributes = map[string][]string{"provider": {"run"}}
	spare := callerPlug("spare", nil)
	spare.contributes = map[string][]string{"provider": {"run"}}
	cfg := callConfig(writeHome(t, memory, kvstore, spare))
	cfg.Activation.Packages = map[string]string{"kvstore": pluginpkg.ActivationLazy, "spare": pluginpkg.ActivationLazy}
	k := startLazyKernel(t, cfg)
	if st := pluginState(t, k, "kvstore"); st.State != observe.StateDeclared {
		t.Fatalf("kvstore before any call: %q", st.State)
	}
	out, err := k.CallProvider(context.Background(), "plugin/memory/run", json.RawMessage(callScript("storage.kv", "get", `{"echo":"x"}`, true)))
	if err != nil || !strings.Contains(string(out), `{"echo":"x"}`) {
		t.Fatalf("memory's call to storage.kv: %s, %v", out, err)
	}
	st := pluginState(t, k, "kvstore")
	if st.State != observe.StateReady || st.Lazy == nil || st.Lazy.ActivatedBy != "capability/call storage.kv.get by plugin memory" {
		t.Errorf("kvstore after memory's call: %q, %+v", st.State, st.Lazy)
	}
	if err := k.RestartPlugin(context.Background(), "spare"); err != nil {
		t.Fatal(err)
	}
	if st := pluginState(t, k, "spare"); st.State != observe.StateReady || st.Lazy.ActivatedBy != "an explicit start request" {
		t.Errorf("spare after RestartPlugin: %q, %+v", st.State, st.Lazy)
	}
}

// TestLazyPinChecked: a lazy member's pin is checked when its first use
// starts it, as an eager member's is at its build: a binary that does
// not match fails the call, counted as a crash, never runs.
func TestLazyPinChecked(t *testing.T) {
	pid := filepath.Join(t.TempDir(), "p.pid")
	home := writeHome(t, lazyPlug("pinned", pid, "echo"))
	writeJSON(t, filepath.Join(home, "state.json"), map[string]any{"format": 1,
		"packages": map[string]any{"pinned": map[string]any{"enabled": true, "pin": strings.Repeat("0", 64)}}})
	k := startLazyKernel(t, lazyConfig(home))
	_, err := k.CallProvider(context.Background(), "plugin/pinned/echo", nil)
	if err == nil || !strings.Contains(err.Error(), "pin") {
		t.Fatalf("call to a lazy member whose binary does not match its pin: %v", err)
	}
	if n := spawns(t, pid); n != 0 {
		t.Errorf("the mismatched binary ran %d times", n)
	}
	if st := pluginState(t, k, "pinned"); st.Restarts != 1 {
		t.Errorf("%d crashes counted, want 1 (%s)", st.Restarts, st.Reason)
	}
}

// TestEventsCarryGeneration: every event about a plugin carries the
// number of the generation it belongs to: a build's start progress the
// generation being built, a state change and a lazy activation the
// current one.
func TestEventsCarryGeneration(t *testing.T) {
	home := writeHome(t, plug{name: "eager", env: map[string]string{"SCRIPT_PROVIDERS": "echo"}},
		lazyPlug("lazy", filepath.Join(t.TempDir(), "p.pid"), "echo"))
	cfg := testConfig(home)
	cfg.Activation.Packages = map[string]string{"lazy": pluginpkg.ActivationLazy}
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []observe.Event
	defer k.Subscribe(func(e observe.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	})()
	if err := k.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer k.Close(context.Background())
	if _, err := k.CallProvider(context.Background(), "plugin/lazy/echo", json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, e := range events {
		if e.Type != observe.EventPlugin && e.Type != observe.EventPluginState {
			continue
		}
		n++
		if e.Generation != 1 {
			t.Errorf("%s %s %s: generation %d, want 1", e.Type, e.Plugin, e.State, e.Generation)
		}
	}
	if n < 4 {
		t.Errorf("%d plugin events, want the starts and states of both plugins", n)
	}
}

// TestLazyFilesFingerprintedAtStart: a lazy member's files are not read
// until its process starts (its generation fingerprint leaves them out,
// so a member never used costs no file read); once it runs, a reload
// compares them with the files it was started from: changed, its process
// is stopped and the next use starts the new files; a member that never
// started is unchanged whatever its files do.
func TestLazyFilesFingerprintedAtStart(t *testing.T) {
	dir := t.TempDir()
	usedPID, idlePID := filepath.Join(dir, "used.pid"), filepath.Join(dir, "idle.pid")
	// learner declares nothing: its build starts it to learn what it
	// contributes, and records the files it started from.
	learner := lazyPlug("learner", filepath.Join(dir, "learner.pid"), "echo")
	learner.contributes = nil
	home := writeHome(t, lazyPlug("used", usedPID, "echo"), lazyPlug("idle", idlePID, "echo"), learner)
	k := startLazyKernel(t, lazyConfig(home))
	for _, p := range k.Current().Snapshot().Packages {
		if f := p.Fingerprint; p.Name != "learner" && (f.Files != "" || f.Executable != "" || f.Manifest == "") {
			t.Errorf("%s published with files %q, executable %q, manifest %q: want only the manifest",
				p.Name, f.Files, f.Executable, f.Manifest)
		}
	}
	if _, err := k.CallProvider(context.Background(), "plugin/used/echo", json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	plan, err := k.Plan(context.Background())
	if err != nil || plan.Changed() {
		t.Fatalf("plan with nothing changed: %v, %+v", err, plan)
	}
	for _, name := range []string{"used", "idle", "learner"} {
		if err := os.WriteFile(filepath.Join(home, "packages", name, "data.txt"), []byte("v2"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plan, err = k.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]string{}
	for _, c := range plan.Packages {
		classes[c.Name] = string(c.Class) + ": " + strings.Join(c.Reasons, "; ")
	}
	want := map[string]string{"used": "reloaded: package files changed (data.txt)", "idle": "unchanged: ",
		"learner": "reloaded: package files changed (data.txt)"}
	if fmt.Sprint(classes) != fmt.Sprint(want) {
		t.Fatalf("plan after both packages changed:\n got %v\nwant %v", classes, want)
	}
	before := pluginState(t, k, "used").PID
	if res, err := k.Reload(context.Background()); err != nil || !res.Published {
		t.Fatalf("reload: %v, %+v", err, res)
	}
	if st := pluginState(t, k, "used"); st.State != observe.StateDeclared {
		t.Errorf("used after the reload: %q, want declared (its process %d started from other files)", st.State, before)
	}
	if _, err := k.CallProvider(context.Background(), "plugin/used/echo", json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	if n, m := spawns(t, usedPID), spawns(t, idlePID); n != 2 || m != 0 {
		t.Errorf("spawns: used %d, idle %d; want 2 and 0", n, m)
	}
}

// TestLazyDeclaredEvents: publishing lazy members reports each one
// declared, once, with its generation and when it happened; a reload that
// keeps them declared reports nothing again for them.
func TestLazyDeclaredEvents(t *testing.T) {
	dir := t.TempDir()
	var plugs []plug
	for _, name := range []string{"alpha", "beta"} {
		plugs = append(plugs, lazyPlug(name, filepath.Join(dir, name+".pid"), "echo"))
	}
	var mu sync.Mutex
	var seen []observe.Event
	k := startKernelSubscribed(t, lazyConfig(writeHome(t, plugs...)), func(e observe.Event) {
		if e.Type == observe.EventPluginState {
			mu.Lock()
			seen = append(seen, e)
			mu.Unlock()
		}
	})
	check := func(when string, want []string) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		var got []string
		for _, e := range seen {
			got = append(got, e.Plugin+"="+e.State)
			if e.State == string(observe.StateDeclared) && (e.Generation != 1 || e.Time.IsZero() || e.Message != declaredReason) {
				t.Errorf("%s: %s declared in generation %d at %v (%q), want generation 1, a time and the reason", when, e.Plugin,
					e.Generation, e.Time, e.Message)
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: state events %q, want %q", when, got, want)
		}
	}
	check("published", []string{"alpha=declared", "beta=declared"})
	if _, err := k.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	check("reloaded, unchanged", []string{"alpha=declared", "beta=declared"})
}
