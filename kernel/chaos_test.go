//go:build unix

package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/sidecar"
)

var (
	chaosDuration = flag.Duration("chaos.duration", 3*time.Second, "how long TestChaos injects faults")
	chaosPlugins  = flag.Int("chaos.plugins", 6, "how many plugins TestChaos runs")
	chaosCallers  = flag.Int("chaos.callers", 4, "how many goroutines TestChaos dispatches from")
	chaosSummary  = flag.String("chaos.summary", "", "file to append TestChaos's summary line to")
)

// chaosStats counts what happened; every field is updated atomically.
type chaosStats struct {
	calls, ok, denied, skipped, requiredErrs, otherErrs atomic.Int64
	kills, reloads, failedReloads, restarts, crashes    atomic.Int64
	violations                                          atomic.Int64
	firstViolation                                      atomic.Value // string
}

func (s *chaosStats) violate(format string, args ...any) {
	if s.violations.Add(1) == 1 {
		s.firstViolation.Store(fmt.Sprintf(format, args...))
	}
}

// TestChaos runs plugins that are randomly slow, hang, fail and crash, while
// callers dispatch continuously, a killer SIGKILLs random sidecars and
// reloads swap generations. It checks the invariants: every call returns
// exactly one result or one typed error, within its deadline (with a
// generous margin); only optional plugins are ever skipped and a required
// plugin's failure always surfaces as an error naming it; the current
// generation is always complete; nothing leaks. It stops by itself after
// -chaos.duration (default 3s; see docs/reliability.md for longer runs).
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test skipped in -short mode")
	}
	n := *chaosPlugins
	var plugs []plug
	for i := range n {
		plugs = append(plugs, plug{name: fmt.Sprintf("p%02d", i), required: i%3 == 0, priority: i,
			intercepts: []string{"tool.before"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=chaos"}})
	}
	home := writeHome(t, plugs...)
	cfg := testConfig(home)
	cfg.Deadlines.Intercept = 150 * time.Millisecond
	cfg.DrainTimeout = 2 * time.Second
	cfg.Supervision = Supervision{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 200 * time.Millisecond,
		HangTimeout: time.Second, CrashBudget: 1000, CrashWindow: time.Minute, BackoffMin: 10 * time.Millisecond,
		BackoffMax: 100 * time.Millisecond}
	k := startKernel(t, cfg)
	var st chaosStats
	unsub := k.Subscribe(func(e Event) {
		switch {
		case e.Type == EventPluginCrashed:
			st.crashes.Add(1)
		case e.Type == EventPluginState && e.State == string(StateStarting):
			st.restarts.Add(1)
		}
	})
	defer unsub()
	required := map[string]bool{}
	for _, p := range plugs {
		required[p.name] = p.required
	}

	ctx, cancel := context.WithTimeout(context.Background(), *chaosDuration)
	defer cancel()
	var wg sync.WaitGroup
	for range *chaosCallers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chaosCaller(ctx, k, n, required, &st)
		}()
	}
	wg.Add(2)
	go func() { defer wg.Done(); chaosKiller(ctx, k, &st) }()
	go func() { defer wg.Done(); chaosReloader(ctx, k, home, plugs, &st) }()
	wg.Wait()

	summary := fmt.Sprintf("chaos: %v, %d plugins, %d callers: %d calls (%d ok, %d denied, %d with skipped optional steps, "+
		"%d required-plugin errors, %d other errors); faults: %d kills, %d crashes seen, %d restarts, %d reloads (%d rolled back); "+
		"invariant violations: %d",
		*chaosDuration, n, *chaosCallers, st.calls.Load(), st.ok.Load(), st.denied.Load(), st.skipped.Load(),
		st.requiredErrs.Load(), st.otherErrs.Load(), st.kills.Load(), st.crashes.Load(), st.restarts.Load(),
		st.reloads.Load(), st.failedReloads.Load(), st.violations.Load())
	t.Log(summary)
	if *chaosSummary != "" {
		f, err := os.OpenFile(*chaosSummary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, summary)
			f.Close()
		}
	}
	if v := st.violations.Load(); v > 0 {
		t.Fatalf("%d invariant violations; first: %v", v, st.firstViolation.Load())
	}
	if st.calls.Load() == 0 || st.kills.Load() == 0 {
		t.Fatalf("chaos did nothing: %s", summary)
	}
}

// chaosCaller dispatches until ctx is done and checks each result.
func chaosCaller(ctx context.Context, k *Kernel, n int, required map[string]bool, st *chaosStats) {
	// A chain runs n interceptors, each bounded by the intercept deadline.
	bound := time.Duration(n)*k.cfg.Deadlines.Intercept + 2*time.Second
	for ctx.Err() == nil {
		st.calls.Add(1)
		start := time.Now()
		res, err := k.Intercept(context.Background(), contribution.Point("tool.before"), json.RawMessage(`[]`))
		if d := time.Since(start); d > bound {
			st.violate("a call took %v, beyond its deadlines' bound %v", d, bound)
		}
		checkGeneration(k, st)
		var pe *PluginError
		switch {
		case err == nil:
			checkResult(res, required, st)
		case errors.As(err, &pe):
			if !pe.Required || !required[pe.Plugin] {
				st.violate("an optional plugin's failure failed the call: %v", err)
			}
			st.requiredErrs.Add(1)
		default:
			st.otherErrs.Add(1)
			st.violate("untyped error: %v", err)
		}
	}
}

func checkResult(res *InterceptResult, required map[string]bool, st *chaosStats) {
	skipped := false
	for _, s := range res.Steps {
		if s.Decision == DecisionSkipped {
			skipped = true
			if required[s.Plugin] {
				st.violate("required plugin %q was skipped: %v", s.Plugin, s.Err)
			}
		}
	}
	switch {
	case res.Denied:
		st.denied.Add(1)
	case skipped:
		st.skipped.Add(1)
	default:
		st.ok.Add(1)
	}
}

// checkGeneration asserts the current generation is complete: every
// interceptor's plugin is a member.
func checkGeneration(k *Kernel, st *chaosStats) {
	g := k.Current()
	if g == nil {
		st.violate("no current generation")
		return
	}
	for _, c := range g.Registry().Interceptors("tool.before") {
		if g.Member(c.Source.Plugin) == nil {
			st.violate("generation %d has an interceptor of %q, which is not a member", g.Number(), c.Source.Plugin)
		}
	}
}

// chaosKiller SIGKILLs a random running sidecar every 50-150ms.
func chaosKiller(ctx context.Context, k *Kernel, st *chaosStats) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(50+rand.IntN(100)) * time.Millisecond):
		}
		clients := k.Current().Clients()
		if len(clients) == 0 {
			continue
		}
		c := clients[rand.IntN(len(clients))]
		select {
		case <-c.Done():
			continue
		default:
		}
		if syscall.Kill(c.PID(), syscall.SIGKILL) == nil {
			st.kills.Add(1)
		}
	}
}

// chaosReloader changes a random manifest and reloads every 200-400ms.
func chaosReloader(ctx context.Context, k *Kernel, home string, plugs []plug, st *chaosStats) {
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(200+rand.IntN(200)) * time.Millisecond):
		}
		j := rand.IntN(len(plugs))
		plugs[j].version = fmt.Sprintf("1.0.%d", i+1)
		data, _ := json.Marshal(manifest(plugs[j]))
		if err := os.WriteFile(home+"/packages/"+plugs[j].name+"/plugin.json", data, 0o644); err != nil {
			st.violate("rewriting a manifest: %v", err)
		}
		st.reloads.Add(1)
		if _, err := k.Reload(ctx); err != nil {
			// A required plugin crashing during its start rolls the reload
			// back; the current generation must stay as it was.
			st.failedReloads.Add(1)
			var rse *sidecar.RequiredStartError
			if !errors.As(err, &rse) && ctx.Err() == nil && !isBuildError(err) {
				st.violate("reload failed with an untyped error: %v", err)
			}
		}
	}
}

func isBuildError(err error) bool {
	var be *generation.BuildError
	return errors.As(err, &be)
}
