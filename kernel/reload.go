package kernel

import (
	"context"
	"fmt"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/config"
)

// ReloadResult is the outcome of a successful Reload.
type ReloadResult struct {
	// Plan is what the reload found and applied.
	Plan *generation.Plan
	// Published is false when the plan had no change: nothing was started
	// or stopped and no generation was published.
	Published bool
	// Generation is the current generation after the reload.
	Generation *generation.Generation
}

// Plan compares the current generation with what the home and config now
// ask for, without starting anything.
func (k *Kernel) Plan(ctx context.Context) (*generation.Plan, error) {
	k.buildMu.Lock()
	defer k.buildMu.Unlock()
	l, err := k.currentLocked()
	if err != nil {
		return nil, err
	}
	_, plan, err := k.plan(l.run.Snapshot(), l.gen)
	return plan, err
}

// Reload plans, then applies the plan: it starts only added and reloaded
// packages (pool and one startup budget), adopts the running sidecars of
// unchanged ones, builds and validates the new generation and swaps it in.
// Removed and replaced sidecars are stopped only after the swap, once the
// old generation's in-flight calls drain.
//
// A package required by the config's policy, or run as required by the
// current generation, that is no longer installed or whose manifest no
// longer loads is a failure, like a required package failing to start (a
// package that is required only by its own manifest may be disabled by the
// operator; see the package doc). An optional plugin that runs in the
// current generation (or is declared there, lazy) whose manifest no longer
// loads, while its package is still installed and enabled, is kept: carried
// over at its running version with its sidecar, unchanged in the plan, the
// load problems (file and field) in its reason and in a warning of the
// plan and the new generation. Disabling or removing it takes it out.
//
// On any failure (a required package failing, a validation error, the
// budget running out, Close cancelling the reload) Reload rolls back:
// adopted sidecars stay with the current generation, everything newly
// started is stopped, the current generation keeps serving throughout,
// unchanged, plugin states are as before, and the error (a
// *generation.BuildError, wrapped with ErrClosed when Close cancelled it)
// lists every problem.
//
// Plugins that are down (an optional one that failed to start, one
// waiting for a supervised restart) are started again, except a plugin that
// failed past its crash budget: it stays failed, with its budget, unless
// its package changed (its plan class is unchanged, its reason says why);
// RestartPlugin restarts it. Every plugin the reload starts (added or
// reloaded) starts with a fresh crash budget; the others keep theirs.
//
// Reloads are serialized: a Reload called while another runs waits for it,
// then plans afresh (reloads are not coalesced). A reload whose plan has no
// change restarts nothing and publishes nothing.
func (k *Kernel) Reload(ctx context.Context) (*ReloadResult, error) {
	k.buildMu.Lock()
	defer k.buildMu.Unlock()
	l, err := k.currentLocked()
	if err != nil {
		return nil, err
	}
	from := l.run.Snapshot()
	in, err := k.planInputs(from, l.gen)
	if err != nil {
		return nil, err
	}
	return k.apply(ctx, l, from, in)
}

// apply plans from the current generation l (whose snapshot is from) to in
// and, if anything changed, builds and publishes the new generation
// adopting unchanged sidecars. It must be called with buildMu held.
func (k *Kernel) apply(ctx context.Context, l *live, from *generation.Snapshot, in generation.Inputs) (*ReloadResult, error) {
	plan, err := generation.NewPlan(from, in)
	if err != nil {
		return nil, fmt.Errorf("kernel: plan: %w", err)
	}
	k.logPlan("reload", plan)
	if !plan.Changed() {
		return &ReloadResult{Plan: plan, Generation: l.gen}, nil
	}
	in.KeepFailed = keptDown(l, plan, in.KeepFailed)
	var adopt []string
	for _, name := range namesOf(plan, generation.ClassUnchanged) {
		if l.client(name) != nil || l.run.Lazy(name) != nil {
			adopt = append(adopt, name) // running, or down and kept down as it is; a lazy member's slot
		}
	}
	in.Plan = plan
	r, err := k.build(ctx, in, l, adopt)
	if err != nil {
		k.bakesFailedToStart(in, err)
		return nil, err
	}
	// What the reload starts, it starts with a fresh crash budget.
	k.super.resetCrashesOf(append(namesOf(plan, generation.ClassAdded), namesOf(plan, generation.ClassReloaded)...)...)
	k.publish(r)
	return &ReloadResult{Plan: plan, Published: true, Generation: r.Generation()}, nil
}

// keptDown narrows held (plugins past their crash budget) to those the plan
// leaves unchanged and that have no client in l to adopt: they are carried
// over as failed members. One with a client (exited) is adopted as it is.
func keptDown(l *live, plan *generation.Plan, held map[string]string) map[string]string {
	out := map[string]string{}
	for _, name := range namesOf(plan, generation.ClassUnchanged) {
		if reason, ok := held[name]; ok && l.client(name) == nil {
			if m := l.gen.Member(name); m != nil && m.Reason != "" {
				reason = m.Reason
			}
			out[name] = reason
		}
	}
	return out
}

// currentLocked returns the current generation; buildMu must be held.
func (k *Kernel) currentLocked() (*live, error) {
	switch l := k.current.Load(); {
	case k.closed.Load():
		return nil, ErrClosed
	case l == nil:
		return nil, ErrNotStarted
	default:
		return l, nil
	}
}

// load reads the home into build inputs.
func (k *Kernel) load() (generation.Inputs, error) {
	inst, err := k.loader.Load(k.config().Home)
	if err != nil {
		return generation.Inputs{}, fmt.Errorf("kernel: %w", err)
	}
	return k.inputs(inst), nil
}

// plan loads the home and plans from a snapshot to it as a reload would:
// the snapshot's required members expected, plugins past their crash
// budget kept down, running optional plugins whose manifest no longer loads
// kept (keepBroken; prev is the generation from describes, nil for none).
func (k *Kernel) plan(from *generation.Snapshot, prev *generation.Generation) (generation.Inputs, *generation.Plan, error) {
	in, err := k.planInputs(from, prev)
	if err != nil {
		return in, nil, err
	}
	plan, err := generation.NewPlan(from, in)
	if err != nil {
		return in, nil, fmt.Errorf("kernel: plan: %w", err)
	}
	return in, plan, nil
}

// planInputs loads the home into the inputs a reload from the snapshot
// from (of generation prev, nil for none) builds: the snapshot's required
// members expected, plugins past their crash budget kept down, running
// optional plugins whose manifest no longer loads kept (keepBroken).
func (k *Kernel) planInputs(from *generation.Snapshot, prev *generation.Generation) (generation.Inputs, error) {
	in, err := k.load()
	if err != nil {
		return in, err
	}
	k.expectRunning(&in, from)
	keepBroken(&in, from, prev)
	if len(in.Kept) > 0 {
		in.Launch = k.launches(in.Installed)
	}
	in.KeepFailed = k.super.heldDown()
	return in, nil
}

// PlanFrom plans from a snapshot (such as the one `kernelctl run` writes
// for each published generation) to what cfg's home and config now ask
// for, without a running kernel and without starting anything.
func PlanFrom(cfg config.Config, from *generation.Snapshot) (*generation.Plan, error) {
	k, err := New(cfg)
	if err != nil {
		return nil, err
	}
	_, plan, err := k.plan(from, nil)
	return plan, err
}

// namesOf returns the packages of plan of the given class, sorted.
func namesOf(plan *generation.Plan, class generation.Class) []string {
	var out []string
	for _, c := range plan.Packages {
		if c.Class == class {
			out = append(out, c.Name)
		}
	}
	return out
}
