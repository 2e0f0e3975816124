package kernel

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/builder"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

// supervisor tracks plugin states and restarts crashed plugins. Lock order:
// Kernel.buildMu, then supervisor.mu, then bus.mu; statsTable.mu is a
// leaf, taken under supervisor.mu by Plugins.
type supervisor struct {
	ctx    context.Context // cancelled by Close: no new restarts
	cancel context.CancelFunc
	wg     sync.WaitGroup // restart goroutines

	mu      sync.Mutex
	status  map[string]*stateRecord
	crashes map[string][]time.Time // per plugin, within the window
	counted map[string]uint64      // per plugin, the client whose crash was counted last
	// held names the plugins failed past their crash budget: only
	// RestartPlugin, or a Reload that changes the package, starts them again.
	held map[string]bool
}

func newSupervisor() *supervisor {
	ctx, cancel := context.WithCancel(context.Background())
	return &supervisor{ctx: ctx, cancel: cancel, status: map[string]*stateRecord{}, crashes: map[string][]time.Time{},
		counted: map[string]uint64{}, held: map[string]bool{}}
}

// stateRecord is what the supervisor records of a plugin at its last
// transition: the part of observe.PluginStatus it owns (Plugins adds the
// rest), kept small since a host may have its plugins by the hundred.
type stateRecord struct {
	state    observe.PluginState
	reason   string
	stderr   []string
	restarts int // crashes within the window at the transition
	since    time.Time
}

// Plugins returns every plugin's supervision state, sorted by name. A
// plugin's PID and Confinement are those of its live process in the
// current generation (zero and nil when none runs); after Close every
// plugin is observe.StateStopped.
func (k *Kernel) Plugins() []observe.PluginStatus {
	l := k.current.Load()
	s := k.super
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]observe.PluginStatus, 0, len(s.status))
	for name, st := range s.status {
		cp := observe.PluginStatus{Name: name, State: st.state, Reason: st.reason, Stderr: append([]string(nil), st.stderr...),
			Restarts: st.restarts, Since: st.since}
		cp.PID, cp.Confinement = runningProcess(l, name)
		memberStatus(l, &cp)
		cp.Bake = k.bakeOf(name)
		if cs := k.stats.lookup(name); cs != nil {
			cp.Calls = cs.snapshot()
		}
		cp.Protocol, cp.Features = protocolStatus(l, name)
		cp.Usage = k.usage.snapshot(name)
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// stopped records, once Close stopped every process, that every plugin is
// stopped: from then on Plugins reports each one stopped, with no PID.
func (k *Kernel) stopped() {
	s := k.super
	s.mu.Lock()
	names := slices.Sorted(maps.Keys(s.status))
	s.mu.Unlock()
	k.setStates(k.currentNumber(), names, observe.StateStopped, "the kernel was closed")
}

// setState records a transition and announces it. It must not be called
// with supervisor.mu held.
func (k *Kernel) setState(plugin string, st observe.PluginState, reason string, stderr []string) {
	k.setStateUnless(plugin, st, reason, stderr, nil)
}

// setStateIn is setState for a transition of the build of generation n
// (a plugin starting in it), which its event names.
func (k *Kernel) setStateIn(n uint64, plugin string, st observe.PluginState) {
	k.setStateGen(n, plugin, st, "", nil, nil)
}

// setStateUnless is setState, unless skip (if not nil) reports true; skip
// runs under supervisor.mu, so it is ordered with every other transition.
// It reports whether skip did.
func (k *Kernel) setStateUnless(plugin string, st observe.PluginState, reason string, stderr []string, skip func() bool) bool {
	return k.setStateGen(0, plugin, st, reason, stderr, skip)
}

// setStateGen is setStateUnless, its event naming generation n (0: the
// current one).
func (k *Kernel) setStateGen(n uint64, plugin string, st observe.PluginState, reason string, stderr []string, skip func() bool) bool {
	s := k.super
	s.mu.Lock()
	if skip != nil && skip() {
		s.mu.Unlock()
		return true
	}
	cur := s.status[plugin]
	if cur != nil && cur.state == st && cur.reason == reason {
		s.mu.Unlock()
		return false
	}
	s.status[plugin] = &stateRecord{state: st, reason: reason, stderr: stderr, restarts: len(s.crashes[plugin]), since: time.Now()}
	s.mu.Unlock()
	if n == 0 {
		n = k.currentNumber()
	}
	k.events.emit(observe.Event{Type: observe.EventPluginState, Generation: n, Plugin: plugin, State: string(st), Message: reason})
	return false
}

// declaredReason is the status reason of a lazy member not started.
const declaredReason = "lazy: declared, not started; its first use starts it"

// setStates is setStateGen(n, name, st, reason, nil, nil) for each of
// names (a generation's lazy members, or every plugin at Close, which a
// host may have by the hundred): one lock, and one allocation for their
// new statuses.
func (k *Kernel) setStates(n uint64, names []string, st observe.PluginState, reason string) {
	s := k.super
	now := time.Now()
	changed := make([]string, 0, len(names))
	s.mu.Lock()
	if len(s.status) == 0 { // a new kernel's first generation: no growing map
		s.status = make(map[string]*stateRecord, len(names))
	}
	var fresh []stateRecord // room for the rest, allocated at the first new state
	for i, name := range names {
		cur := s.status[name]
		if cur != nil && cur.state == st && cur.reason == reason {
			continue
		}
		if len(fresh) == 0 {
			fresh = make([]stateRecord, len(names)-i)
		}
		ps := &fresh[0]
		fresh = fresh[1:]
		*ps = stateRecord{state: st, reason: reason, restarts: len(s.crashes[name]), since: now}
		s.status[name] = ps
		changed = append(changed, name)
	}
	s.mu.Unlock()
	for _, name := range changed {
		k.events.emit(observe.Event{Type: observe.EventPluginState, Generation: n, Plugin: name, State: string(st),
			Message: reason, Time: now})
	}
}

// published records the states of a newly published generation's members.
// A member carried over from the previous generation (adopted) keeps the
// state it has. A member started by the build whose sidecar has exited
// already may have crashed before it was current, when its crash report was
// ignored as stale: it is counted as a crash here (once, whichever comes
// first), never reported ready.
func (k *Kernel) published(l *live) {
	g := l.gen
	var declared []string
	for _, m := range g.Members() {
		name := m.Package.Name
		switch {
		case m.Adopted && k.super.tracked(name):
		case m.Status == generation.StatusFailed:
			k.setState(name, observe.StateFailed, m.Reason, nil)
		case m.Status == generation.StatusDeclared:
			declared = append(declared, name)
		case m.Status == generation.StatusRunning:
			if k.setStateUnless(name, observe.StateReady, "", nil, func() bool { return l.down(name) }) {
				c := l.client(name)
				cause := c.Err()
				if cause == nil {
					cause = fmt.Errorf("plugin %q exited before its generation was published", name)
				}
				k.recordCrash(name, c.ID(), cause, c.StderrTail())
			}
		}
	}
	k.setStates(g.Number(), declared, observe.StateDeclared, declaredReason)
	s := k.super
	s.mu.Lock()
	var gone []string
	for name := range s.status {
		if g.Member(name) == nil {
			gone = append(gone, name)
		}
	}
	for _, name := range gone {
		delete(s.status, name)
		delete(s.crashes, name)
		delete(s.counted, name)
		delete(s.held, name)
	}
	s.mu.Unlock()
}

// isCurrent reports whether c is its plugin's client in the current
// generation: callbacks from any other (replaced) process are stale.
func (k *Kernel) isCurrent(c *sidecar.Client) bool {
	l := k.current.Load()
	return l != nil && l.client(c.Name()) == c
}

// health handles a heartbeat transition of client c.
func (k *Kernel) health(c *sidecar.Client, responsive bool) {
	plugin := c.Name()
	if !k.isCurrent(c) {
		k.log.Debug("ignoring a stale health report", "plugin", plugin, "client", c.ID())
		return
	}
	if !responsive {
		k.setState(plugin, observe.StateUnresponsive, "a heartbeat went unanswered", nil)
		return
	}
	k.setState(plugin, observe.StateReady, "", nil)
}

// crashed handles a plugin whose client c terminated outside Close: its
// pending calls have already failed; it is restarted after backoff, or
// left failed past the crash budget.
func (k *Kernel) crashed(c *sidecar.Client, err *sidecar.CrashError) {
	plugin := c.Name()
	l := k.current.Load()
	var n uint64
	if l != nil {
		n = l.gen.Number()
	}
	// The sidecar has logged the crash, with the plugin's name: one line.
	k.events.emit(observe.Event{Type: observe.EventPluginCrashed, Generation: n, Plugin: plugin, Err: err})
	if l != nil {
		if z := l.run.Lazy(plugin); z != nil {
			z.Crashed(c) // a lazy member's process: declared again, its crash counted
			k.recordCrash(plugin, c.ID(), err, err.Stderr)
			return
		}
	}
	if !k.isCurrent(c) {
		return // a process already replaced (or being retired): stale
	}
	k.recordCrash(plugin, c.ID(), err, err.Stderr)
}

// recordCrash counts a crash of plugin's client (or, with client 0, a
// failed restart) against its budget and schedules a restart after backoff,
// or leaves it failed. A client's crash is counted once, however many times
// it is reported.
func (k *Kernel) recordCrash(plugin string, client uint64, cause error, stderr []string) {
	sup := k.config().Supervision
	s := k.super
	now := time.Now()
	s.mu.Lock()
	if client != 0 {
		if s.counted[plugin] == client {
			s.mu.Unlock()
			return
		}
		s.counted[plugin] = client
	}
	recent := s.crashes[plugin][:0]
	for _, t := range s.crashes[plugin] {
		if now.Sub(t) < sup.CrashWindow {
			recent = append(recent, t)
		}
	}
	recent = append(recent, now)
	s.crashes[plugin] = recent
	exhausted := len(recent) > sup.CrashBudget
	if exhausted {
		s.held[plugin] = true
	}
	s.mu.Unlock()
	if exhausted {
		reason := fmt.Sprintf("crashed %d times within %v (budget %d); not restarting until "+
			"an explicit restart or a reload that changes the package: %v", len(recent), sup.CrashWindow, sup.CrashBudget, cause)
		if !k.lazyCrashed(plugin, true, reason, stderr) {
			k.setState(plugin, observe.StateFailed, reason, stderr)
		}
		k.bakeCrashed(plugin, fmt.Sprintf("crashed %d times within %v (budget %d): %v", len(recent), sup.CrashWindow, sup.CrashBudget, cause))
		return
	}
	if k.lazyCrashed(plugin, false, fmt.Sprintf("crash %d of %d allowed within %v: %v", len(recent), sup.CrashBudget, sup.CrashWindow, cause), stderr) {
		return
	}
	delay := backoff(sup.BackoffMin, sup.BackoffMax, len(recent))
	k.setState(plugin, observe.StateRestarting, fmt.Sprintf("crash %d of %d allowed within %v; restarting in %v: %v",
		len(recent), sup.CrashBudget, sup.CrashWindow, delay, cause), stderr)
	k.schedule(plugin, delay)
}

// backoff doubles from min for each crash in the window, capped at max.
func backoff(min, max time.Duration, crashes int) time.Duration {
	d := min
	for i := 1; i < crashes && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return d
}

// schedule restarts plugin after delay, unless the kernel closes first or
// a reload brought the plugin back meanwhile.
func (k *Kernel) schedule(plugin string, delay time.Duration) {
	s := k.super
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		k.restart(s.ctx, plugin)
	}()
}

// spawn runs f in a goroutine supervision owns (stop waits for it),
// unless supervision stopped; it reports whether f runs.
func (s *supervisor) spawn(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx.Err() != nil {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

// down reports whether the named member exists but does not run: it
// failed, or its sidecar exited.
func (l *live) down(name string) bool {
	m := l.gen.Member(name)
	if m == nil || m.Status == generation.StatusDeclarative {
		return false
	}
	if z := l.run.Lazy(name); z != nil {
		return z.State() == builder.LazyFailed // declared, stopped idle or starting is not down
	}
	c := l.client(name)
	if c == nil {
		return true
	}
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// stop cancels pending restarts and waits for restart goroutines.
func (s *supervisor) stop() {
	s.mu.Lock()
	s.cancel()
	s.mu.Unlock()
	s.wg.Wait()
}

// heldReason is why a Reload keeps a plugin failed past its crash budget
// down, as its plan says.
const heldReason = "failed past its crash budget; RestartPlugin, or a change of the package, starts it again"

// heldDown returns the plugins failed past their crash budget, each with
// heldReason, for Inputs.KeepFailed.
func (s *supervisor) heldDown() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.held))
	for name := range s.held {
		out[name] = heldReason
	}
	return out
}

// isHeld reports whether plugin is failed past its crash budget.
func (s *supervisor) isHeld(plugin string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[plugin]
}

// resetCrashesOf forgets the crash history of each plugin: its budget
// starts afresh, and it is no longer held down.
func (s *supervisor) resetCrashesOf(plugins ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range plugins {
		delete(s.crashes, p)
		delete(s.held, p)
	}
}

// tracked reports whether plugin has a state.
func (s *supervisor) tracked(plugin string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status[plugin] != nil
}

// states returns a copy of every plugin's state, by name.
func (s *supervisor) states() map[string]stateRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]stateRecord, len(s.status))
	for name, st := range s.status {
		out[name] = *st
	}
	return out
}

// settle undoes what a failed build did to states: every plugin it set
// starting gets back its state from before (announced), or is forgotten
// when it had none (it was new to that build).
func (k *Kernel) settle(before map[string]stateRecord) {
	for name, st := range k.super.states() {
		if st.state != observe.StateStarting {
			continue
		}
		prev, ok := before[name]
		if !ok {
			k.super.mu.Lock()
			delete(k.super.status, name)
			k.super.mu.Unlock()
			continue
		}
		k.setState(name, prev.state, prev.reason, prev.stderr)
	}
}

// runningProcess is the PID of plugin's sidecar in l and its confinement, or
// zero and nil when l is nil (no generation is published) or the plugin
// has no live process in it.
func runningProcess(l *live, plugin string) (int, *pluginpkg.ConfinementReport) {
	if l == nil {
		return 0, nil
	}
	c, err := l.running(plugin)
	if err != nil {
		return 0, nil
	}
	return c.PID(), c.Confinement()
}
