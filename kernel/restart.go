package kernel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/builder"
	"github.com/extkernel/extkernel/kernel/observe"
)

// ErrUnknownPlugin is wrapped by RestartPlugin's error when the current
// generation has no member by that name that runs a sidecar: it is not
// installed, disabled, outside the closure, or declarative.
var ErrUnknownPlugin = errors.New("unknown plugin")

// RestartPlugin restarts the named plugin now, whatever its state (ready,
// restarting, or failed past its crash budget), and resets its crash
// budget. Like a supervised restart, it builds and publishes a new
// generation from the inputs of the current one in which only this plugin
// (and members that failed because it did, along requires edges) gets a new
// sidecar: every other running plugin is adopted, every other plugin that is
// down stays down. The replaced sidecar is stopped once the old generation
// drains.
//
// A lazy member that is declared (not started, or stopped idle) is
// started: an explicit start request, which the kernel counts as its
// activation; a lazy member that runs or failed is rebuilt as above, then
// started. Either way the call returns once it runs, or why it cannot.
//
// It returns ErrNotStarted before Start, ErrClosed after Close, and an error
// wrapping ErrUnknownPlugin for a name no running member of the current
// generation has. When the plugin fails to start again, it returns why (a
// *generation.BuildError for a required plugin, whose failure is rolled
// back) and counts the failure as a crash: supervision retries it with
// backoff within its fresh budget.
func (k *Kernel) RestartPlugin(ctx context.Context, name string) error {
	k.buildMu.Lock()
	defer k.buildMu.Unlock()
	l, err := k.currentLocked()
	if err != nil {
		return err
	}
	if m := l.gen.Member(name); m == nil || m.Status == generation.StatusDeclarative {
		return fmt.Errorf("kernel: restart %q: %w", name, ErrUnknownPlugin)
	}
	k.super.resetCrashesOf(name)
	if z := l.run.Lazy(name); z != nil && z.State() == builder.LazyDeclared {
		if err := k.activate(ctx, z); err != nil {
			return fmt.Errorf("kernel: restart %q: %w", name, err)
		}
		return nil
	}
	if err := k.restartLocked(ctx, l, name); err != nil {
		k.recordCrash(name, 0, fmt.Errorf("restart failed: %w", err), nil)
		return fmt.Errorf("kernel: restart %q: %w", name, err)
	}
	if z := k.current.Load().run.Lazy(name); z != nil {
		if err := k.activate(ctx, z); err != nil {
			return fmt.Errorf("kernel: restart %q: %w", name, err)
		}
	}
	return nil
}

// restart is a supervised restart of a crashed plugin, after its backoff.
// A failed restart counts as another crash. A plugin failed past its budget
// meanwhile is not restarted: a restart scheduled before a Reload or
// RestartPlugin started it afresh can fire after it crashed its new budget
// away.
func (k *Kernel) restart(ctx context.Context, plugin string) {
	k.buildMu.Lock()
	defer k.buildMu.Unlock()
	l, err := k.currentLocked()
	if err != nil || !l.down(plugin) || k.super.isHeld(plugin) {
		return // closed, removed, brought back by a reload, or past its budget
	}
	if err := k.restartLocked(ctx, l, plugin); err != nil {
		k.log.Error("restart failed", "plugin", plugin, "error", err)
		k.recordCrash(plugin, 0, fmt.Errorf("restart failed: %w", err), nil)
	}
}

// restartLocked rebuilds the current generation l with a new sidecar for
// plugin and publishes it. It returns why the plugin could not be started.
// It must be called with buildMu held.
func (k *Kernel) restartLocked(ctx context.Context, l *live, plugin string) error {
	k.setStateIn(k.number+1, plugin, observe.StateStarting) // the generation the rebuild publishes
	names := restartSet(l.gen, plugin)
	k.log.Debug("restart", "plugin", plugin, "restarting", names)
	in := k.lastInputs
	var adopt []string
	adopt, in.KeepFailed = carryOver(l, names)
	plan, err := generation.NewRestartPlan(l.run.Snapshot(), in, names...)
	if err != nil {
		return fmt.Errorf("kernel: plan: %w", err)
	}
	k.logPlan("restart", plan)
	in.Plan = plan
	r, err := k.build(ctx, in, l, adopt)
	if err != nil {
		return err
	}
	k.publish(r) // counts a crash right after the start (see published)
	if m := r.Generation().Member(plugin); m.Status == generation.StatusFailed {
		return errors.New(m.Reason) // an optional plugin that did not start
	}
	return nil
}

// restartSet is plugin and every failed member that depends on it,
// transitively: their failure may be a cascade from plugin's, so they are
// retried with it. It is sorted.
func restartSet(g *generation.Generation, plugin string) []string {
	dependents := map[string][]string{}
	for name, deps := range g.Closure().DependsOn {
		for _, d := range deps {
			dependents[d] = append(dependents[d], name)
		}
	}
	set := map[string]bool{plugin: true}
	queue := []string{plugin}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		for _, d := range dependents[name] {
			if m := g.Member(d); !set[d] && m != nil && m.Status == generation.StatusFailed {
				set[d] = true
				queue = append(queue, d)
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// carryOver returns what a rebuild of l that restarts only names carries
// over: every other member with a client, running or exited, to adopt, and
// every other failed member's reason, to keep failed.
func carryOver(l *live, names []string) ([]string, map[string]string) {
	restart := map[string]bool{}
	for _, n := range names {
		restart[n] = true
	}
	var adopt []string
	failed := map[string]string{}
	for _, m := range l.gen.Members() {
		name := m.Package.Name
		switch {
		case restart[name]:
		case l.client(name) != nil || l.run.Lazy(name) != nil:
			adopt = append(adopt, name)
		case m.Status == generation.StatusFailed:
			failed[name] = m.Reason
		}
	}
	return adopt, failed
}
