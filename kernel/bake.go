package kernel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

// Bakes (docs/operations.md, "Bake"): an upgrade with a bake
// (pluginpkg.Bake, recorded in the home's state file) is watched from the
// first generation that runs its version. The version fails its bake when
// it exceeds its crash budget, fails to start, or (with a max error rate)
// fails more of its calls than the rate allows; the kernel then returns to
// the version it replaced on its own: pluginpkg.RollbackBake, then a
// Reload, in a goroutine supervision owns. A host call that finds the
// plugin down while that runs waits for it (within its own deadline) and
// is served by the generation the rollback publishes. A bake that runs
// its duration out passes: pluginpkg.EndBake.
//
// bakeTable.mu is a leaf: nothing else is locked under it, and it is never
// held while a watch reports (events, the state file, a reload).

// bakeTable holds the watch of each plugin's latest bake.
type bakeTable struct {
	// returns counts the rollbacks of failed bakes in progress, so that
	// dispatch looks for one only while there is.
	returns atomic.Int32
	mu      sync.Mutex
	m       map[string]*bakeWatch
}

// bakeWatch watches one version under bake.
type bakeWatch struct {
	k    *Kernel
	name string
	bake pluginpkg.Bake
	st   *callStats
	// base are st's calls and errors when the watch began.
	baseCalls, baseErrors uint64
	timer                 *time.Timer
	// fired is set once the bake ended (failed or passed): the first end
	// wins. done is closed when a rollback it started finished, either way.
	fired atomic.Bool
	done  chan struct{}

	mu     sync.Mutex // guards status
	status observe.BakeStatus
}

// watchBakes starts watching the versions under bake that l runs and
// stops watching those it no longer runs. It is called with buildMu held,
// after l is published.
func (k *Kernel) watchBakes(l *live) {
	var fresh, fail []*bakeWatch
	t := &k.bakes
	t.mu.Lock()
	for _, name := range slices.Sorted(maps.Keys(t.m)) {
		w := t.m[name]
		if m := l.gen.Member(name); m == nil || m.Package.Bake == nil || m.Package.Bake.Digest != w.bake.Digest {
			if w.fired.Load() {
				if m == nil {
					delete(t.m, name)
				}
				continue // its outcome stays in status until another bake
			}
			w.cancel()
			delete(t.m, name)
		}
	}
	for _, m := range l.gen.Members() {
		if m.Package.Bake == nil || m.Status == generation.StatusDeclarative {
			continue
		}
		w, started := k.watchLocked(m.Package)
		if !started {
			continue
		}
		fresh = append(fresh, w)
		if m.Status == generation.StatusFailed {
			fail = append(fail, w)
		}
	}
	t.mu.Unlock()
	for _, w := range fresh {
		k.events.emit(observe.Event{Type: observe.EventBake, Generation: l.gen.Number(), Plugin: w.name, State: observe.BakeWatching,
			Message: fmt.Sprintf("watching %s %s (from %s) for %v%s", w.name, w.status.Version, w.bake.FromVersion, w.bake.Duration, rateText(w.bake))})
	}
	for _, w := range fail {
		w.fail(fmt.Sprintf("failed to start: %s", l.gen.Member(w.name).Reason))
	}
}

// bakesFailedToStart fails the bake of every version under bake that
// failed to start in a build that failed because of it (a required
// plugin): the current generation keeps running the previous version,
// and the kernel puts its files back too, so that the home and what runs
// agree again (and the next start does not fail the same way). It is
// called with buildMu held.
func (k *Kernel) bakesFailedToStart(in generation.Inputs, err error) {
	var be *generation.BuildError
	if in.Installed == nil || !errors.As(err, &be) {
		return
	}
	for _, e := range be.Errs {
		var se *sidecar.StartError
		if !errors.As(e, &se) {
			continue
		}
		for _, p := range in.Installed.Packages {
			if p.Name != se.Plugin || p.Bake == nil || p.Bake.Digest != p.Digest {
				continue
			}
			k.bakes.mu.Lock()
			w, _ := k.watchLocked(p)
			k.bakes.mu.Unlock()
			w.fail(fmt.Sprintf("failed to start: %v", se))
		}
	}
}

// watchLocked returns the watch of p's version under bake (p.Bake, not
// nil), starting one when the table has none for that version (started).
// It must be called with bakeTable.mu held.
func (k *Kernel) watchLocked(p *pluginpkg.Package) (w *bakeWatch, started bool) {
	t := &k.bakes
	if w := t.m[p.Name]; w != nil && w.bake.Digest == p.Bake.Digest {
		return w, false
	}
	w = k.newBakeWatch(p, *p.Bake)
	if t.m == nil {
		t.m = map[string]*bakeWatch{}
	}
	t.m[p.Name] = w
	return w, true
}

// of returns plugin's watch, nil when it has none.
func (t *bakeTable) of(plugin string) *bakeWatch {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[plugin]
}

// newBakeWatch starts watching p's version under bake b.
func (k *Kernel) newBakeWatch(p *pluginpkg.Package, b pluginpkg.Bake) *bakeWatch {
	st := k.stats.of(p.Name)
	now := time.Now()
	w := &bakeWatch{k: k, name: p.Name, bake: b, st: st, baseCalls: st.calls.Load(), baseErrors: st.errors.Load(), done: make(chan struct{}),
		status: observe.BakeStatus{State: observe.BakeWatching, Version: p.Manifest.Version.String(), Digest: b.Digest,
			FromVersion: b.FromVersion, FromDigest: b.FromDigest, Started: now, Until: now.Add(b.Duration),
			MaxErrorRate: b.MaxErrorRate, MinCalls: b.MinCalls}}
	st.bake.Store(w)
	w.timer = time.AfterFunc(b.Duration, func() { k.super.spawn(w.pass) })
	return w
}

// rateText describes a bake's error rate, "" without one.
func rateText(b pluginpkg.Bake) string {
	if b.MaxErrorRate == 0 {
		return ""
	}
	return fmt.Sprintf(", at most %g%% of calls failing once %d ended", b.MaxErrorRate*100, b.MinCalls)
}

// cancel stops watching: the version is no longer the one under bake.
func (w *bakeWatch) cancel() {
	if w.fired.CompareAndSwap(false, true) {
		w.timer.Stop()
		w.st.bake.CompareAndSwap(w, nil)
		close(w.done)
	}
}

// calls returns the calls and errors counted since the watch began.
func (w *bakeWatch) calls() (calls, errs uint64) {
	return w.st.calls.Load() - w.baseCalls, w.st.errors.Load() - w.baseErrors
}

// callEnded judges the error rate after a call to the plugin ended.
func (w *bakeWatch) callEnded() {
	if w.bake.MaxErrorRate == 0 || w.fired.Load() {
		return
	}
	calls, errs := w.calls()
	if errs == 0 || calls < uint64(max(w.bake.MinCalls, 1)) || float64(errs)/float64(calls) <= w.bake.MaxErrorRate {
		return
	}
	w.fail(fmt.Sprintf("%d of %d calls failed during the bake, over its max error rate of %g%%", errs, calls, w.bake.MaxErrorRate*100))
}

// fail ends the bake as failed, once, and starts the return to the
// previous version.
func (w *bakeWatch) fail(reason string) {
	if !w.fired.CompareAndSwap(false, true) {
		return
	}
	w.timer.Stop()
	w.k.bakes.returns.Add(1)
	at := time.Now()
	w.set(observe.BakeRollingBack, reason, at)
	w.k.log.Warn("bake failed; returning to the previous version", "plugin", w.name, "version", w.status.Version,
		"to", w.bake.FromVersion, "reason", reason)
	w.k.events.emit(observe.Event{Type: observe.EventBake, Plugin: w.name, State: observe.BakeRollingBack,
		Message: fmt.Sprintf("%s %s failed its bake (%s); returning to %s", w.name, w.status.Version, reason, w.bake.FromVersion)})
	if !w.k.super.spawn(func() { w.rollback(at) }) {
		w.returned() // the kernel is closing
	}
}

// rollback returns to the previous version: the files, then a reload.
func (w *bakeWatch) rollback(at time.Time) {
	defer w.returned()
	k := w.k
	_, err := pluginpkg.RollbackBake(k.config().Home, w.name, w.bake.Digest)
	if err == nil {
		_, err = k.Reload(k.super.ctx)
		if err != nil {
			err = fmt.Errorf("returned to %s on disk, but the reload failed: %w", w.bake.FromVersion, err)
		}
	}
	if err != nil {
		w.set(observe.BakeRollbackFailed, fmt.Sprintf("%s; returning failed: %v", w.status.Reason, err), time.Now())
		k.log.Error("returning from a failed bake failed", "plugin", w.name, "error", err)
		k.events.emit(observe.Event{Type: observe.EventBake, Plugin: w.name, State: observe.BakeRollbackFailed, Err: err,
			Message: fmt.Sprintf("%s: returning to %s failed", w.name, w.bake.FromVersion)})
		return
	}
	w.set(observe.BakeRolledBack, w.status.Reason, time.Now())
	k.events.emit(observe.Event{Type: observe.EventBake, Plugin: w.name, State: observe.BakeRolledBack, Elapsed: time.Since(at),
		Message: fmt.Sprintf("%s returned to %s after its bake of %s failed", w.name, w.bake.FromVersion, w.status.Version)})
}

// returned ends a rollback started by fail, either way.
func (w *bakeWatch) returned() {
	w.st.bake.CompareAndSwap(w, nil)
	close(w.done)
	w.k.bakes.returns.Add(-1)
}

// pass ends the bake as passed when its duration ran out.
func (w *bakeWatch) pass() {
	if !w.fired.CompareAndSwap(false, true) {
		return
	}
	w.st.bake.CompareAndSwap(w, nil)
	close(w.done)
	w.set(observe.BakePassed, "", time.Now())
	if err := pluginpkg.EndBake(w.k.config().Home, w.name, w.bake.Digest); err != nil {
		w.k.log.Warn("ending a bake that passed", "plugin", w.name, "error", err)
	}
	w.k.events.emit(observe.Event{Type: observe.EventBake, Plugin: w.name, State: observe.BakePassed,
		Message: fmt.Sprintf("%s %s passed its bake of %v", w.name, w.status.Version, w.bake.Duration)})
}

// set records a state of the bake; the counters freeze when it ends.
func (w *bakeWatch) set(state, reason string, at time.Time) {
	calls, errs := w.calls()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status.Ended.IsZero() {
		w.status.Calls, w.status.Errors, w.status.Ended = calls, errs, at
	}
	w.status.State, w.status.Reason = state, reason
}

// snapshot returns the bake's status.
func (w *bakeWatch) snapshot() *observe.BakeStatus {
	w.mu.Lock()
	st := w.status
	w.mu.Unlock()
	if st.State == observe.BakeWatching {
		st.Calls, st.Errors = w.calls()
	}
	return &st
}

// bakeOf returns plugin's bake status, nil when none was watched.
func (k *Kernel) bakeOf(plugin string) *observe.BakeStatus {
	w := k.bakes.of(plugin)
	if w == nil {
		return nil
	}
	return w.snapshot()
}

// bakeCrashed fails plugin's bake, if one runs, when it crashed past its
// budget.
func (k *Kernel) bakeCrashed(plugin, reason string) {
	w := k.bakes.of(plugin)
	if w != nil {
		w.fail(reason)
	}
}

// returning returns, while plugin's failed bake is being rolled back,
// a channel closed when that ended; nil otherwise.
func (k *Kernel) returning(plugin string) <-chan struct{} {
	w := k.bakes.of(plugin)
	if w == nil || !w.fired.Load() {
		return nil
	}
	select {
	case <-w.done:
		return nil
	default:
		return w.done
	}
}

// afterReturn waits, while plugin's failed bake is being rolled back,
// until that ended (at most d, within ctx), and leases the generation
// current then, with plugin's member in it: the caller reaches the plugin
// there. ok is false when there was nothing to wait for, or no such
// member once it ended.
func (k *Kernel) afterReturn(ctx context.Context, plugin string, d time.Duration) (l *live, m *generation.Member, ok bool) {
	done := k.returning(plugin)
	if done == nil {
		return nil, nil, false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		return nil, nil, false
	case <-ctx.Done():
		return nil, nil, false
	}
	l, err := k.acquire()
	if err != nil {
		return nil, nil, false
	}
	if m = l.gen.Member(plugin); m == nil {
		l.release()
		return nil, nil, false
	}
	return l, m, true
}

// stopBakes stops every bake timer, for Close.
func (k *Kernel) stopBakes() {
	k.bakes.mu.Lock()
	defer k.bakes.mu.Unlock()
	for _, w := range k.bakes.m {
		w.timer.Stop()
	}
}
