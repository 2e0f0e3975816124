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
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/builder"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/sidecar"
)

var (
	chaosDuration = flag.Duration("chaos.duration", 3*time.Second, "how long TestChaos injects faults")
	chaosPlugins  = flag.Int("chaos.plugins", 6, "how many plugins TestChaos runs")
	chaosCallers  = flag.Int("chaos.callers", 4, "how many goroutines TestChaos dispatches from")
	chaosSummary  = flag.String("chaos.summary", "", "file to append TestChaos's summary line to")
)

// chaosBudget is the crash budget TestChaos runs with: the real default,
// so plugins do get failed past it.
const chaosBudget = 3

// chaosStats counts what happened; every field is updated atomically.
type chaosStats struct {
	intercepts, providerCalls, actions                         atomic.Int64
	ok, denied, skipped, requiredErrs, optionalErrs, otherErrs atomic.Int64
	kills, crashes, restarts, protocolFaults, exhausted        atomic.Int64
	reloads, failedReloads, brokenReloads, explicitRestarts    atomic.Int64
	timerLag                                                   atomic.Int64 // the most a 10ms timer fired late, in ns
	violations                                                 atomic.Int64
	firstViolation                                             atomic.Value // string
}

func (s *chaosStats) violate(format string, args ...any) {
	if s.violations.Add(1) == 1 {
		s.firstViolation.Store(fmt.Sprintf(format, args...))
	}
}

// chaosRig is what the goroutines of one TestChaos run share.
type chaosRig struct {
	k        *Kernel
	home     string
	plugs    []plug
	required map[string]bool
	st       chaosStats
	starts   startLog

	lateMu    sync.Mutex
	lateCalls []lateCall
}

// lateCall is a call that returned after its bound.
type lateCall struct {
	what string
	over time.Duration // beyond the bound
	err  error
}

func (r *chaosRig) late(c lateCall) {
	r.lateMu.Lock()
	defer r.lateMu.Unlock()
	r.lateCalls = append(r.lateCalls, c)
}

// checkLate turns each late call into a violation, unless the test process
// was starved of CPU at least that long (a timer fired that late, see lag),
// which delays every deadline alike. It returns how many late calls it
// excused so.
func (r *chaosRig) checkLate() int {
	r.lateMu.Lock()
	defer r.lateMu.Unlock()
	lag := time.Duration(r.st.timerLag.Load())
	excused := 0
	for _, c := range r.lateCalls {
		if c.over > lag {
			r.st.violate("%s returned %v after its deadlines' bound (a timer fired at most %v late); it returned %v",
				c.what, c.over, lag, c.err)
			continue
		}
		excused++
	}
	return excused
}

// TestChaos runs plugins whose interceptors, providers and actions are
// randomly slow, hang, fail, crash, or write hostile frames to the host,
// while callers dispatch all three kinds of calls continuously, a killer
// SIGKILLs random sidecars and a reloader changes manifests (sometimes
// breaking a required one) and reloads, with the real crash budget. It
// checks the invariants: every call returns exactly one result or one typed
// error, within its deadline (with a generous margin); an optional
// plugin's failure never fails an interceptor chain, and a plugin's
// failure is a *PluginError naming it, required as configured; the current
// generation is always complete; a reload that breaks a required package
// fails with a *generation.BuildError naming it and changes nothing;
// between two reloads no plugin is started more than the budget allows; no
// goroutine, process or detached helper outlives Close. It stops by itself
// after -chaos.duration (default 3s; see docs/reliability.md for longer
// runs).
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test skipped in -short mode")
	}
	faultLog := filepath.Join(t.TempDir(), "faults")
	r := &chaosRig{plugs: chaosPlugs(*chaosPlugins, faultLog), required: map[string]bool{}}
	for _, p := range r.plugs {
		r.required[p.name] = p.required
	}
	r.home = writeHome(t, r.plugs...)
	cfg := testConfig(r.home)
	cfg.Deadlines.Intercept = 150 * time.Millisecond
	cfg.Deadlines.Provider = 150 * time.Millisecond
	cfg.Deadlines.Action = 150 * time.Millisecond
	cfg.DrainTimeout = 2 * time.Second
	cfg.Supervision = config.Supervision{HeartbeatInterval: 100 * time.Millisecond, HeartbeatTimeout: 200 * time.Millisecond,
		HangTimeout: time.Second, CrashBudget: chaosBudget, CrashWindow: time.Minute, BackoffMin: 10 * time.Millisecond,
		BackoffMax: 100 * time.Millisecond}
	r.k = startKernel(t, cfg)
	unsub := r.k.Subscribe(r.observe)
	defer unsub()

	ctx, cancel := context.WithTimeout(context.Background(), *chaosDuration)
	defer cancel()
	var wg sync.WaitGroup
	for range *chaosCallers {
		wg.Add(1)
		go func() { defer wg.Done(); r.caller(ctx) }()
	}
	wg.Add(3)
	go func() { defer wg.Done(); r.lag(ctx) }()
	go func() { defer wg.Done(); r.killer(ctx) }()
	go func() { defer wg.Done(); r.reloader(ctx) }()
	wg.Wait()

	unsub()
	mostStarts := r.starts.check(chaosBudget, &r.st)
	late := r.checkLate()
	if err := r.k.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	faults := readFaults(t, faultLog)
	left := leftOrphans(faults.orphans)
	if len(left) > 0 {
		r.st.violate("detached helpers left after Close: %v", left)
	}
	summary := r.summary(faults, len(left), mostStarts, late)
	t.Log(summary)
	if *chaosSummary != "" {
		f, err := os.OpenFile(*chaosSummary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, summary)
			f.Close()
		}
	}
	if v := r.st.violations.Load(); v > 0 {
		t.Fatalf("%d invariant violations; first: %v", v, r.st.firstViolation.Load())
	}
	if r.st.intercepts.Load() == 0 || r.st.providerCalls.Load() == 0 || r.st.actions.Load() == 0 || r.st.kills.Load() == 0 {
		t.Fatalf("chaos did not do everything: %s", summary)
	}
}

// chaosPlugs returns n plugins, every third one required, each with a
// chaotic interceptor, provider and action; odd ones may write hostile
// frames, and every third (from the second) may start detached helpers.
// The last one is optional and crashes by itself soon after each start, so
// the crash budget is exhausted between reloads.
func chaosPlugs(n int, faultLog string) []plug {
	var plugs []plug
	defer func() {
		last := &plugs[len(plugs)-1]
		last.required = false
		last.env["SCRIPT_EXIT_AFTER"] = "30ms"
	}()
	for i := range n {
		name := fmt.Sprintf("p%02d", i)
		var faults []string
		if i%2 == 1 {
			faults = append(faults, "hostile")
		}
		if i%3 == 1 {
			faults = append(faults, "orphan")
		}
		plugs = append(plugs, plug{name: name, required: i%3 == 0, priority: i, intercepts: []string{"tool.before"},
			env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=chaos", "SCRIPT_PROVIDERS": "get=chaos",
				"SCRIPT_ACTIONS": "act=chaos", "SCRIPT_FAULTS": strings.Join(faults, ","), "SCRIPT_LOG": faultLog}})
	}
	return plugs
}

func (r *chaosRig) summary(f chaosFaults, orphansLeft, mostStarts, late int) string {
	st := &r.st
	calls := st.intercepts.Load() + st.providerCalls.Load() + st.actions.Load()
	return fmt.Sprintf("chaos: %v, %d plugins, %d callers: %d calls (%d intercepts, %d provider calls, %d actions; "+
		"%d ok, %d denied, %d with skipped optional steps, %d required-plugin errors, %d optional-plugin errors, %d other errors); "+
		"faults: %d kills, %d crashes seen, %d starts, %d budgets exhausted, %d hostile frames (%d garbage, %d oversized, "+
		"%d duplicate-id; %d protocol faults seen), %d detached helpers (%d left); reloads: %d (%d rolled back, %d of them "+
		"breaking a required package), %d explicit restarts of exhausted plugins; most starts of one plugin between reloads: %d (%d allowed per fresh budget); "+
		"largest timer delay %v (%d calls past their bound by no more); invariant violations: %d",
		*chaosDuration, len(r.plugs), *chaosCallers, calls, st.intercepts.Load(), st.providerCalls.Load(), st.actions.Load(),
		st.ok.Load(), st.denied.Load(), st.skipped.Load(), st.requiredErrs.Load(), st.optionalErrs.Load(), st.otherErrs.Load(),
		st.kills.Load(), st.crashes.Load(), st.restarts.Load(), st.exhausted.Load(), f.hostile["garbage"]+f.hostile["oversized"]+
			f.hostile["duplicate-id"], f.hostile["garbage"], f.hostile["oversized"], f.hostile["duplicate-id"],
		st.protocolFaults.Load(), len(f.orphans), orphansLeft, st.reloads.Load(), st.failedReloads.Load(),
		st.brokenReloads.Load(), st.explicitRestarts.Load(), mostStarts, chaosBudget+1,
		time.Duration(st.timerLag.Load()).Round(time.Millisecond), late, st.violations.Load())
}

// observe counts crashes, protocol faults, exhausted budgets and starts,
// and logs starts and publishes in order for the budget check.
func (r *chaosRig) observe(e observe.Event) {
	switch {
	case e.Type == observe.EventPluginCrashed:
		r.st.crashes.Add(1)
		if errors.Is(e.Err, sidecar.ErrProtocol) {
			r.st.protocolFaults.Add(1)
		}
	case e.Type == observe.EventPluginState && e.State == string(observe.StateFailed) && strings.HasPrefix(e.Message, "crashed "):
		r.st.exhausted.Add(1)
	case e.Type == observe.EventPlugin && e.State == string(builder.Starting):
		r.st.restarts.Add(1)
		r.starts.add(startEntry{plugin: e.Plugin})
	case e.Type == observe.EventGenerationPublished:
		// Publishing holds the build lock: the current generation is the
		// one published.
		g := r.k.Current()
		if g == nil || g.Number() != e.Generation {
			r.st.violate("generation %d published, but %v is current", e.Generation, g)
			return
		}
		var own []string
		for _, m := range g.Members() {
			if !m.Adopted && m.Status != generation.StatusDeclarative {
				own = append(own, m.Package.Name)
			}
		}
		r.starts.add(startEntry{published: e.Generation, own: own})
	}
}

// caller dispatches intercepts, provider calls and actions until ctx is
// done and checks each result.
func (r *chaosRig) caller(ctx context.Context) {
	k, n := r.k, len(r.plugs)
	// A chain runs n interceptors, each bounded by the intercept deadline.
	chainBound := time.Duration(n)*k.config().Deadlines.Intercept + 2*time.Second
	callBound := k.config().Deadlines.Provider + 2*time.Second
	for ctx.Err() == nil {
		target := r.plugs[rand.IntN(n)].name
		start := time.Now()
		var err error
		var kind string
		switch rand.IntN(4) {
		case 0:
			kind = "provider call"
			r.st.providerCalls.Add(1)
			var out json.RawMessage
			out, err = k.CallProvider(context.Background(), "plugin/"+target+"/get", json.RawMessage(`[]`))
			r.checkDirect(kind, target, out, err)
		case 1:
			kind = "action"
			r.st.actions.Add(1)
			var out json.RawMessage
			out, err = k.RunAction(context.Background(), "plugin/"+target+"/act", json.RawMessage(`{}`))
			r.checkDirect(kind, target, out, err)
		default:
			kind = "intercept"
			r.st.intercepts.Add(1)
			var res *InterceptResult
			res, err = k.Intercept(context.Background(), contribution.Point("tool.before"), json.RawMessage(`[]`))
			r.checkChain(res, err)
		}
		bound := callBound
		if kind == "intercept" {
			bound = chainBound
		}
		if d := time.Since(start); d > bound {
			r.late(lateCall{fmt.Sprintf("a %s to %q", kind, target), d - bound, err})
		}
		r.checkGeneration()
	}
}

// checkChain checks an interceptor chain's outcome: a result, or a
// required plugin's *PluginError.
func (r *chaosRig) checkChain(res *InterceptResult, err error) {
	var pe *PluginError
	switch {
	case (res == nil) == (err == nil):
		r.st.violate("an intercept returned %v and %v: want exactly one", res, err)
	case err == nil:
		r.checkResult(res)
	case errors.As(err, &pe):
		if !pe.Required || !r.required[pe.Plugin] {
			r.st.violate("an optional plugin's failure failed the call: %v", err)
		}
		r.st.requiredErrs.Add(1)
	default:
		r.st.otherErrs.Add(1)
		r.st.violate("untyped error: %v", err)
	}
}

func (r *chaosRig) checkResult(res *InterceptResult) {
	skipped := false
	for _, s := range res.Steps {
		if s.Decision == DecisionSkipped {
			skipped = true
			if r.required[s.Plugin] {
				r.st.violate("required plugin %q was skipped: %v", s.Plugin, s.Err)
			}
		}
	}
	switch {
	case res.Denied:
		r.st.denied.Add(1)
	case skipped:
		r.st.skipped.Add(1)
	default:
		r.st.ok.Add(1)
	}
}

// checkDirect checks a provider call's or an action's outcome: an output,
// or a *PluginError naming the target with its policy; an optional target
// that failed may also be missing from the generation (ErrUnknownTarget).
func (r *chaosRig) checkDirect(kind, target string, out json.RawMessage, err error) {
	var pe *PluginError
	switch {
	case (out == nil) == (err == nil):
		r.st.violate("a %s to %q returned %q and %v: want exactly one", kind, target, out, err)
	case err == nil:
		r.st.ok.Add(1)
	case errors.As(err, &pe):
		if pe.Plugin != target || pe.Required != r.required[target] {
			r.st.violate("a %s to %q failed with an error naming %q (required %v): %v", kind, target, pe.Plugin, pe.Required, err)
		}
		if pe.Required {
			r.st.requiredErrs.Add(1)
		} else {
			r.st.optionalErrs.Add(1)
		}
	case errors.Is(err, ErrUnknownTarget) && !r.required[target]:
		r.st.optionalErrs.Add(1)
	default:
		r.st.otherErrs.Add(1)
		r.st.violate("a %s to %q failed with an untyped error: %v", kind, target, err)
	}
}

// checkGeneration asserts the current generation is complete: every
// interceptor's plugin is a member, and so is every required plugin.
func (r *chaosRig) checkGeneration() {
	g := r.k.Current()
	if g == nil {
		r.st.violate("no current generation")
		return
	}
	for _, c := range g.Registry().Interceptors("tool.before") {
		if g.Member(c.Source.Plugin) == nil {
			r.st.violate("generation %d has an interceptor of %q, which is not a member", g.Number(), c.Source.Plugin)
		}
	}
	for name, req := range r.required {
		if req && g.Member(name) == nil {
			r.st.violate("generation %d lacks required plugin %q", g.Number(), name)
		}
	}
}

// lag records how late a 10ms timer fires at most: how starved of CPU the
// test process is, which stretches every deadline alike.
func (r *chaosRig) lag(ctx context.Context) {
	const tick = 10 * time.Millisecond
	t := time.NewTimer(tick)
	defer t.Stop()
	for start := time.Now(); ; start = time.Now() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if late := int64(time.Since(start) - tick); late > r.st.timerLag.Load() {
			r.st.timerLag.Store(late)
		}
		t.Reset(tick)
	}
}

// killer SIGKILLs a random running sidecar every 50-150ms.
func (r *chaosRig) killer(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(50+rand.IntN(100)) * time.Millisecond):
		}
		var alive []*sidecar.Client
		for _, c := range runningClients(r.k) {
			select {
			case <-c.Done():
			default:
				alive = append(alive, c)
			}
		}
		if len(alive) == 0 {
			continue
		}
		if syscall.Kill(alive[rand.IntN(len(alive))].PID(), syscall.SIGKILL) == nil {
			r.st.kills.Add(1)
		}
	}
}

// reloader, every 200-400ms, breaks a required package's manifest and
// reloads (which must fail), or restarts a plugin failed past its budget
// (RestartPlugin), or changes a random manifest and reloads.
func (r *chaosRig) reloader(ctx context.Context) {
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(200+rand.IntN(200)) * time.Millisecond):
		}
		switch n := rand.IntN(5); {
		case n == 0:
			r.st.reloads.Add(1)
			r.breakRequired(ctx)
			continue
		case n <= 2 && r.restartExhausted(ctx):
			continue
		}
		r.st.reloads.Add(1)
		j := rand.IntN(len(r.plugs))
		r.plugs[j].version = fmt.Sprintf("1.0.%d", i+1)
		data, _ := json.Marshal(manifest(r.plugs[j]))
		if err := os.WriteFile(r.manifestPath(r.plugs[j].name), data, 0o644); err != nil {
			r.st.violate("rewriting a manifest: %v", err)
		}
		res, err := r.k.Reload(ctx)
		switch {
		case err == nil && res.Published:
			r.starts.add(startEntry{reloaded: res.Generation.Number()})
		case err != nil:
			// A required plugin crashing during its start rolls the reload
			// back; the current generation must stay as it was.
			r.st.failedReloads.Add(1)
			r.starts.add(startEntry{failedReload: true})
			if ctx.Err() == nil && !isBuildError(err) {
				r.st.violate("reload failed with an untyped error: %v", err)
			}
		}
	}
}

// restartExhausted restarts a random plugin failed past its crash budget
// with RestartPlugin, if there is one, and reports whether there was.
func (r *chaosRig) restartExhausted(ctx context.Context) bool {
	var names []string
	for _, st := range r.k.Plugins() {
		if st.State == observe.StateFailed && strings.HasPrefix(st.Reason, "crashed ") {
			names = append(names, st.Plugin)
		}
	}
	if len(names) == 0 {
		return false
	}
	name := names[rand.IntN(len(names))]
	r.st.explicitRestarts.Add(1)
	err := r.k.RestartPlugin(ctx, name)
	// Its budget starts afresh, whether it started or not (a failed start
	// is its first crash).
	r.starts.add(startEntry{restarted: name})
	if err != nil && ctx.Err() == nil && !isBuildError(err) && !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
		r.st.violate("RestartPlugin(%q) failed with %v, which does not name it", name, err)
	}
	return true
}

// breakRequired writes a manifest that does not parse for a random
// required plugin and reloads: the reload must fail with a BuildError
// naming the package, the plugin must still be a member of the current
// generation; then the manifest is restored.
func (r *chaosRig) breakRequired(ctx context.Context) {
	var names []string
	for _, p := range r.plugs {
		if p.required {
			names = append(names, p.name)
		}
	}
	name := names[rand.IntN(len(names))]
	path := r.manifestPath(name)
	good, err := os.ReadFile(path)
	if err != nil {
		r.st.violate("reading a manifest: %v", err)
		return
	}
	defer func() {
		if err := os.WriteFile(path, good, 0o644); err != nil {
			r.st.violate("restoring a manifest: %v", err)
		}
	}()
	if err := os.WriteFile(path, good[:len(good)/2], 0o644); err != nil {
		r.st.violate("breaking a manifest: %v", err)
		return
	}
	r.st.brokenReloads.Add(1)
	r.st.failedReloads.Add(1)
	_, err = r.k.Reload(ctx)
	var ue *generation.UnavailableError
	switch {
	case err == nil:
		r.st.violate("a reload with a broken manifest of required %q succeeded", name)
	case ctx.Err() != nil:
	case !isBuildError(err) || !errors.As(err, &ue) || ue.Package != name:
		r.st.violate("a reload with a broken manifest of required %q failed with %v, want a BuildError naming it", name, err)
	}
	if g := r.k.Current(); g == nil || g.Member(name) == nil {
		r.st.violate("required %q left the current generation after a rejected reload", name)
	}
	r.checkGeneration()
}

func (r *chaosRig) manifestPath(name string) string {
	return filepath.Join(r.home, "packages", name, "plugin.json")
}

func isBuildError(err error) bool {
	var be *generation.BuildError
	return errors.As(err, &be)
}
