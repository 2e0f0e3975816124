package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/sidecar"
)

// spawnLog makes every scripted plugin of a home append its pid to one file,
// so tests count spawns exactly.
type spawnLog string

func newSpawnLog(t *testing.T) spawnLog { return spawnLog(filepath.Join(t.TempDir(), "pids")) }

func (s spawnLog) with(p plug) plug {
	env := map[string]string{"SCRIPT_PIDFILE": string(s)}
	for k, v := range p.env {
		env[k] = v
	}
	p.env = env
	return p
}

func (s spawnLog) pids(t testing.TB) []int {
	t.Helper()
	data, err := os.ReadFile(string(s))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// rewrite writes p's manifest into home again (after the test changed p).
func rewrite(t testing.TB, home string, p plug) {
	t.Helper()
	writeJSON(t, filepath.Join(home, "packages", p.name, "plugin.json"), manifest(p))
}

func reloadHome(t *testing.T, log spawnLog) (string, []plug) {
	plugs := []plug{
		log.with(plug{name: "alpha", intercepts: []string{"tool.before"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=modify"}}),
		log.with(plug{name: "bravo", priority: -1, intercepts: []string{"tool.before"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=modify"}}),
		log.with(plug{name: "charlie", env: map[string]string{"SCRIPT_PROVIDERS": "get"}}),
	}
	return writeHome(t, plugs...), plugs
}

func TestReloadWithoutChangesSpawnsNothing(t *testing.T) {
	log := newSpawnLog(t)
	home, _ := reloadHome(t, log)
	k := startKernel(t, testConfig(home))
	before := len(log.pids(t))
	g := k.Current()
	res, err := k.Reload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Published || k.Current() != g || res.Plan.Changed() {
		t.Errorf("published %v, same generation %v, changed %v; want nothing to happen", res.Published, k.Current() == g, res.Plan.Changed())
	}
	if got := len(log.pids(t)); got != before || before != 3 {
		t.Errorf("spawns: %d before, %d after; want 3 and 3", before, got)
	}
}

func TestReloadOneChangedPackage(t *testing.T) {
	log := newSpawnLog(t)
	home, plugs := reloadHome(t, log)
	k := startKernel(t, testConfig(home))
	oldPIDs := log.pids(t)
	bravo := plugs[1]
	bravo.version = "1.1.0"
	rewrite(t, home, bravo)
	res, err := k.Reload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []generation.Change{
		{Name: "alpha", Class: generation.ClassUnchanged, From: "1.0.0", To: "1.0.0"},
		{Name: "bravo", Class: generation.ClassReloaded, Reasons: []string{"version 1.0.0 -> 1.1.0"}, From: "1.0.0", To: "1.1.0"},
		{Name: "charlie", Class: generation.ClassUnchanged, From: "1.0.0", To: "1.0.0"},
	}
	if got, _ := json.Marshal(res.Plan.Packages); string(got) != mustJSON(t, want) {
		t.Errorf("plan packages:\n%s\nwant\n%s", got, mustJSON(t, want))
	}
	if !res.Published || res.Generation.Number() != 2 {
		t.Fatalf("published %v generation %d", res.Published, res.Generation.Number())
	}
	if pids := log.pids(t); len(pids) != len(oldPIDs)+1 {
		t.Errorf("spawns after reload: %v, want exactly one more than %v", pids, oldPIDs)
	}
	if clientNamed(k, "alpha") == nil || !k.Current().Member("alpha").Adopted || k.Current().Member("bravo").Adopted {
		t.Error("alpha not adopted or bravo adopted")
	}
	out, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
	if err != nil || string(out.Payload) != `["alpha","bravo"]` {
		t.Errorf("chain after reload: %v, %v", out, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReloadRemovedStopsAfterSwap(t *testing.T) {
	log := newSpawnLog(t)
	home, _ := reloadHome(t, log)
	k := startKernel(t, testConfig(home))
	charlie := clientNamed(k, "charlie").PID()
	aliveAtPublish := make(chan bool, 1)
	unsub := k.Subscribe(func(e observe.Event) {
		if e.Type == observe.EventGenerationPublished {
			aliveAtPublish <- alive(charlie)
		}
	})
	defer unsub()
	if err := os.RemoveAll(filepath.Join(home, "packages", "charlie")); err != nil {
		t.Fatal(err)
	}
	res, err := k.Reload(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := namesOf(res.Plan, generation.ClassRemoved); len(got) != 1 || got[0] != "charlie" {
		t.Errorf("removed = %v", got)
	}
	if !<-aliveAtPublish {
		t.Error("charlie was stopped before the swap")
	}
	k.retiring.Wait() // the old generation drains and stops
	if alive(charlie) {
		t.Error("charlie still runs after the old generation retired")
	}
	if _, err := k.CallProvider(context.Background(), "plugin/charlie/get", nil); !errors.Is(err, ErrUnknownTarget) {
		t.Errorf("removed provider: %v", err)
	}
}

// caller dispatches continuously until stop closes and reports every error.
func caller(k *Kernel, stop <-chan struct{}, errs chan<- error, wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		select {
		case <-stop:
			return
		default:
		}
		res, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
		if err == nil && (res.Denied || len(res.Steps) == 0) {
			err = errors.New("unexpected chain result")
		}
		if err != nil {
			select {
			case errs <- err:
			default:
			}
			return
		}
	}
}

func TestReloadRollbackKeepsServing(t *testing.T) {
	tests := []struct {
		name    string
		add     plug
		budget  time.Duration
		wantErr string
	}{
		{"required added package fails", plug{name: "delta", required: true, env: map[string]string{"SCRIPT_START": "exit"}}, 0,
			`required plugin "delta" failed`},
		{"budget runs out", plug{name: "delta", required: true, env: map[string]string{"SCRIPT_START": "hang"}}, 400 * time.Millisecond,
			"budget"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := newSpawnLog(t)
			home, plugs := reloadHome(t, log)
			cfg := testConfig(home)
			cfg.StartupBudget = tt.budget
			k := startKernel(t, cfg)
			g1 := k.Current()
			stop, errs := make(chan struct{}), make(chan error, 1)
			var wg sync.WaitGroup
			wg.Add(2)
			go caller(k, stop, errs, &wg)
			go caller(k, stop, errs, &wg)
			// Change alpha too, so the reload starts a replacement that the
			// rollback must stop, and add the failing package.
			alpha := plugs[0]
			alpha.version = "2.0.0"
			rewrite(t, home, alpha)
			writeHomePackage(t, home, log.with(tt.add))
			_, err := k.Reload(context.Background())
			var be *generation.BuildError
			if !errors.As(err, &be) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Reload err = %v, want a *generation.BuildError mentioning %q", err, tt.wantErr)
			}
			if k.Current() != g1 {
				t.Error("a failed reload replaced the current generation")
			}
			res, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
			if err != nil || string(res.Payload) != `["alpha","bravo"]` {
				t.Errorf("after rollback: %v, %v", res, err)
			}
			close(stop)
			wg.Wait()
			select {
			case err := <-errs:
				t.Errorf("a concurrent call failed during the reload: %v", err)
			default:
			}
			for _, c := range runningClients(k) {
				select {
				case <-c.Done():
					t.Errorf("rollback stopped %q, which the current generation owns", c.Name())
				default:
				}
			}
			// Only g1's three sidecars may remain; everything the reload
			// started is gone.
			if kids := children(t); len(kids) != 3 {
				t.Errorf("children after rollback: %v, want g1's 3", kids)
			}
		})
	}
}

// writeHomePackage adds one scripted package to an existing home.
func writeHomePackage(t *testing.T, home string, p plug) {
	t.Helper()
	dir := filepath.Join(home, "packages", p.name)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	linkOrCopy(t, scriptedBin, filepath.Join(dir, "bin", "plugin"))
	rewrite(t, home, p)
}

func TestConcurrentReloadsAreSerialized(t *testing.T) {
	log := newSpawnLog(t)
	home, plugs := reloadHome(t, log)
	k := startKernel(t, testConfig(home))
	bravo := plugs[1]
	bravo.version = "1.0.1"
	rewrite(t, home, bravo)
	results := make([]*ReloadResult, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = k.Reload(context.Background())
		}()
	}
	wg.Wait()
	published := 0
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("reload %d: %v", i, errs[i])
		}
		if r.Published {
			published++
		}
	}
	if published != 1 || k.Current().Number() != 2 {
		t.Errorf("%d reloads published, current generation %d; want 1 and 2", published, k.Current().Number())
	}
	if n := len(log.pids(t)); n != 4 {
		t.Errorf("%d spawns, want 3 + 1", n)
	}
}

// TestDispatchDuringSwaps dispatches from many goroutines while
// generations are swapped repeatedly: no call may fail because of a swap.
func TestDispatchDuringSwaps(t *testing.T) {
	log := newSpawnLog(t)
	home, plugs := reloadHome(t, log)
	k := startKernel(t, testConfig(home))
	stop, errs := make(chan struct{}), make(chan error, 1)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go caller(k, stop, errs, &wg)
	}
	for i := range 6 {
		p := plugs[i%2] // alternate alpha and bravo
		p.version = "1.0." + strconv.Itoa(i+1)
		plugs[i%2] = p
		rewrite(t, home, p)
		res, err := k.Reload(context.Background())
		if err != nil || !res.Published {
			t.Fatalf("reload %d: %v (published %v)", i, err, res != nil && res.Published)
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatalf("a call failed during swaps: %v", err)
	default:
	}
	if n := k.Current().Number(); n != 7 {
		t.Errorf("current generation %d, want 7", n)
	}
	k.retiring.Wait()
	if kids := children(t); len(kids) != 3 {
		t.Errorf("children after swaps: %v, want the current 3", kids)
	}
}

var _ = sidecar.ErrClosed
