package builder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// LazyState is where a lazy member's process is.
type LazyState int32

// Lazy states.
const (
	// LazyDeclared: no process; the next use starts one.
	LazyDeclared LazyState = iota
	// LazyStarting: a start is in flight; every caller waits for it.
	LazyStarting
	// LazyReady: the process runs and serves calls.
	LazyReady
	// LazyStopping: an idle stop is in flight; the next use waits for it,
	// then starts a new process.
	LazyStopping
	// LazyFailed: the member may not start (its handshake drifted, or the
	// host holds it down); Lazy.Err says why.
	LazyFailed
	// LazyClosed: the slot is closed; nothing starts any more.
	LazyClosed
)

// String returns the state's name as status shows it.
func (s LazyState) String() string {
	switch s {
	case LazyDeclared:
		return "declared"
	case LazyStarting:
		return "starting"
	case LazyReady:
		return "ready"
	case LazyStopping:
		return "stopping"
	case LazyFailed:
		return "failed"
	}
	return "closed"
}

// LazyHooks are how a lazy member tells its host about its life. Each is
// optional; none may block for long, and none is called with the slot's
// lock held.
type LazyHooks struct {
	// MayStart returns why the named member may not start now (it is
	// held down past its crash budget), nil when it may.
	MayStart func(name string) error
	// Starting reports that a use starts the member; by says what
	// activated it ("first call to provider x by host").
	Starting func(name, by string)
	// Started reports a start's outcome: err is nil for a ready process,
	// a start failure (the crash path: the host counts it against the
	// crash budget), or a *DriftError (the member is then failed until a
	// reload or an explicit restart).
	Started func(name string, c *sidecar.Client, a Activation, err error)
	// IdleStopped reports an idle stop of the member's process c.
	IdleStopped func(name string, c *sidecar.Client, idle time.Duration)
}

// Activation is what the last start of a lazy member took.
type Activation struct {
	// By says what activated it.
	By string
	// At is when the start began; Start how long the spawn and the
	// handshake took together: Spawn until the process ran (the files'
	// fingerprint, the plan, the pin check, the confinement and the
	// exec), Handshake from then
	// until its initialize answer was checked.
	At                      time.Time
	Start, Spawn, Handshake time.Duration
}

// Lazy is the process slot of one lazy member: declared, not started, until
// a use starts it (Acquire, single-flight: concurrent first callers share
// one start); stopped again after its idle timeout when nothing is in
// flight; started again on the next use. A slot outlives a generation
// when the next one adopts it (the member is unchanged): calls in flight
// on both share its process.
//
// Ownership: the slot owns its process and its start and stop goroutines;
// Close ends them and stops the process. Lock order: mu is a leaf (no
// hook, no I/O under it).
//
// Idle stop never loses a call: a user holds the slot (inflight) from
// Acquire to its release, and the stop changes state from ready to
// stopping before it looks at inflight, while Acquire counts itself in
// before it looks at the state (both sequentially consistent atomics):
// either the stop sees the user and backs off, or the user sees the stop
// and waits for it, then starts a new process. What the process does on
// its own (a call of its own, a stream) is seen by sidecar.Client.Busy.
type Lazy struct {
	pkg      *pluginpkg.Package         // its Name is the member's
	env      *slotEnv                   // what the build's slots share
	own      *ownOptions                // with env.client, what its process starts with; nil: nothing of its own
	declared *protocol.InitializeResult // what the generation published
	origin   string                     // OriginManifest or OriginCache
	memo     *derived                   // set only when declared is from the manifest: memo.decl is declared
	key      string                     // its declaration cache key

	idle     atomic.Int64 // the idle timeout in ns; 0 never stops it
	inflight atomic.Int64
	state    atomic.Int32
	cur      atomic.Pointer[sidecar.Client]
	lastUsed atomic.Int64 // UnixNano of the end of the last use
	// firstPending is set by a start and cleared by the end of the first
	// use after it, which sets firstCall (ns since the start began).
	firstPending atomic.Bool
	firstCall    atomic.Int64
	startedAt    atomic.Int64 // UnixNano of the last start's beginning
	// files fingerprints the files and command the current process (or
	// the start in flight) was started from, taken just before its spawn
	// (generation.Fingerprint.WithFiles); nil before the first start.
	files atomic.Pointer[generation.Fingerprint]

	wg sync.WaitGroup // start goroutines and idle stops

	mu struct {
		sync.Mutex
		flight  *flight       // the start in flight, or nil
		stopped chan struct{} // closed when the idle stop in flight ends
		timer   *time.Timer   // the idle check, while ready
		err     error         // why it is LazyFailed
		last    *Activation   // nil before the first start
		starts  int
		stops   int
		// ctx, made by the first start (ctxLocked), is cancelled by
		// Close: it ends a start, and bounds an idle stop.
		ctx    context.Context
		cancel context.CancelFunc
	}
}

// flight is one start, shared by every caller waiting for it.
type flight struct {
	done chan struct{}
	err  error // set before done closes
}

// slotEnv is what every slot a build makes shares, immutable: a host may
// declare its lazy members by the hundred, and a slot holds only what is
// its own.
type slotEnv struct {
	client sidecar.Options // Options.Client with the host's kinds
	cache  DeclCache
	hooks  LazyHooks
	budget time.Duration // bounds one start
	made   int64         // UnixNano when the build made it: its slots' first "last used"
}

// newSlotEnv returns the environment of the slots of a build with o whose
// members are told of kinds.
func newSlotEnv(o Options, kinds []contribution.Kind) *slotEnv {
	e := &slotEnv{client: o.Client, cache: o.Cache, hooks: o.LazyHooks, budget: o.Budget, made: time.Now().UnixNano()}
	if e.budget <= 0 {
		e.budget = DefaultBudget
	}
	e.client.Kinds = kinds
	return e
}

// ownOptions are the options of one member's process that are its own
// (generation.Launch): with slotEnv.client, its sidecar.Options.
type ownOptions struct {
	config      json.RawMessage
	env         map[string]string
	limits      pluginpkg.ResourceLimits
	confinement pluginpkg.Confinement
}

// ownOf returns the options l gives its member's process.
func ownOf(l generation.Launch) ownOptions {
	return ownOptions{config: l.Config, env: l.Env, limits: l.Limits, confinement: l.Confinement}
}

// empty reports whether o gives its process nothing of its own, as a host
// of many plugins gives most of them.
func (o *ownOptions) empty() bool {
	return len(o.config) == 0 && len(o.env) == 0 && o.limits == (pluginpkg.ResourceLimits{}) &&
		o.confinement.Mode == "" && o.confinement.Grants == nil && o.confinement.Denies == nil
}

// options returns the sidecar options of a process started with own in e
// (nil: nothing of its own, a slot's own when it has none).
func (e *slotEnv) options(own *ownOptions) sidecar.Options {
	o := e.client
	if own != nil {
		o.Config, o.Env, o.Limits, o.Confinement = own.config, own.env, own.limits, own.confinement
	}
	return o
}

// newLazy returns the declared slot of a member published from declared.
func newLazy(pkg *pluginpkg.Package, env *slotEnv, own ownOptions, declared *protocol.InitializeResult, origin, key string) *Lazy {
	z := &Lazy{pkg: pkg, env: env, declared: declared, origin: origin, key: key}
	if !own.empty() {
		o := own // (taking own's address would move it to the heap at every call)
		z.own = &o
	}
	z.lastUsed.Store(env.made) // one clock read for a build's slots, made together
	return z
}

// SetIdle sets the idle timeout (zero: never stop); it applies from the
// next idle check.
func (z *Lazy) SetIdle(d time.Duration) { z.idle.Store(int64(d)) }

// State returns where the member is.
func (z *Lazy) State() LazyState { return LazyState(z.state.Load()) }

// Client returns the running process, nil when none runs.
func (z *Lazy) Client() *sidecar.Client {
	if z.State() != LazyReady {
		return nil
	}
	return z.cur.Load()
}

// Err returns why the member is failed, nil when it is not.
func (z *Lazy) Err() error {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.mu.err
}

// SlotStats is what a lazy member has done (Lazy.Stats).
type SlotStats struct {
	// Last is its last activation; FirstCall the time from its beginning
	// to the end of the first use after it (zero until that ended).
	Last      Activation
	FirstCall time.Duration
	// Starts and Stops count its starts and idle stops.
	Starts, Stops int
	// LastUsed is when its last use ended.
	LastUsed time.Time
}

// Stats returns what the member has done.
func (z *Lazy) Stats() SlotStats {
	z.mu.Lock()
	defer z.mu.Unlock()
	var last Activation
	if z.mu.last != nil {
		last = *z.mu.last
	}
	return SlotStats{Last: last, FirstCall: time.Duration(z.firstCall.Load()), Starts: z.mu.starts, Stops: z.mu.stops,
		LastUsed: time.Unix(0, z.lastUsed.Load())}
}

// Origin returns where the published declarations came from.
func (z *Lazy) Origin() string { return z.origin }

// Acquire returns the member's running process for one use, starting it
// when none runs (single-flight), and the release the caller MUST call
// once its use ended (the call answered, or the stream opened: an open
// stream keeps the process busy on its own). by says what the use is, for
// the activation it may cause; it is formatted only then. ctx bounds the
// caller's wait, not the start: a start a caller gave up on goes on for
// the others, bounded by the startup budget.
func (z *Lazy) Acquire(ctx context.Context, by func() string) (*sidecar.Client, func(), error) {
	for {
		z.inflight.Add(1)
		if z.State() == LazyReady {
			if c := z.cur.Load(); c != nil && !isDone(c) {
				return c, z.release, nil
			}
		}
		z.inflight.Add(-1) // not a use: nothing ran
		if err := z.wait(ctx, by); err != nil {
			return nil, func() {}, err
		}
	}
}

// TryAcquire is Acquire without starting or waiting: ok is false when no
// process is ready now.
func (z *Lazy) TryAcquire() (c *sidecar.Client, release func(), ok bool) {
	z.inflight.Add(1)
	if z.State() == LazyReady {
		if c := z.cur.Load(); c != nil && !isDone(c) {
			return c, z.release, true
		}
	}
	z.inflight.Add(-1)
	return nil, nil, false
}

// release ends one use.
func (z *Lazy) release() {
	now := time.Now().UnixNano()
	z.lastUsed.Store(now)
	if z.firstPending.Load() && z.firstPending.CompareAndSwap(true, false) {
		z.firstCall.Store(now - z.startedAt.Load())
	}
	z.inflight.Add(-1)
}

func isDone(c *sidecar.Client) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// ErrSlotClosed is why a use of a lazy member whose slot is closed fails:
// its generation is stopping.
var ErrSlotClosed = errors.New("the plugin's generation is stopping")

// wait makes progress toward a ready process: it starts one, or waits for
// the start or the stop in flight. It returns when the caller should try
// again, or why it cannot.
func (z *Lazy) wait(ctx context.Context, by func() string) error {
	z.mu.Lock()
	switch z.State() {
	case LazyClosed:
		z.mu.Unlock()
		return ErrSlotClosed
	case LazyFailed:
		err := z.mu.err
		z.mu.Unlock()
		return err
	case LazyStopping:
		ch := z.mu.stopped
		z.mu.Unlock()
		return waitFor(ctx, ch)
	case LazyStarting:
		f := z.mu.flight
		z.mu.Unlock()
		if err := waitFor(ctx, f.done); err != nil {
			return err
		}
		return f.err
	case LazyReady:
		c := z.cur.Load()
		if c == nil || !isDone(c) {
			z.mu.Unlock()
			return nil // ready again: try
		}
		// Its process exited (a crash the host is told about apart).
		z.cur.Store(nil)
		z.stopTimerLocked()
		z.state.Store(int32(LazyDeclared))
	}
	f := z.startLocked(by)
	z.mu.Unlock()
	if err := waitFor(ctx, f.done); err != nil {
		return err
	}
	return f.err
}

// waitFor waits for ch, or returns why ctx ended first.
func waitFor(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Start starts the member now, if it does not run, and waits for it under
// ctx: an explicit activation.
func (z *Lazy) Start(ctx context.Context, by string) error {
	_, release, err := z.Acquire(ctx, func() string { return by })
	release()
	return err
}

// startLocked begins a start, with mu held and the state declared, and
// returns its flight. A host that holds the member down fails it at once.
func (z *Lazy) startLocked(by func() string) *flight {
	f := &flight{done: make(chan struct{})}
	if z.env.hooks.MayStart != nil {
		if err := z.env.hooks.MayStart(z.pkg.Name); err != nil {
			f.err = err
			close(f.done)
			return f
		}
	}
	z.mu.flight = f
	z.state.Store(int32(LazyStarting))
	z.wg.Add(1)
	go z.run(z.ctxLocked(), f, by())
	return f
}

// ctxLocked returns the slot's context, making it on first use (a slot
// that never starts costs no context): cancelled by Close, or already
// when the slot is closed.
func (z *Lazy) ctxLocked() context.Context {
	if z.mu.ctx == nil {
		z.mu.ctx, z.mu.cancel = context.WithCancel(context.Background())
		if z.State() == LazyClosed {
			z.mu.cancel()
		}
	}
	return z.mu.ctx
}

// run is one start: spawn and handshake, bounded by the startup budget and
// by Close; the handshake checked against what was published; the outcome
// recorded and reported.
func (z *Lazy) run(slotCtx context.Context, f *flight, by string) {
	defer z.wg.Done()
	if z.env.hooks.Starting != nil {
		z.env.hooks.Starting(z.pkg.Name, by)
	}
	a := Activation{By: by, At: time.Now()}
	z.files.Store(startFiles(z.pkg))
	ctx, cancel := context.WithTimeoutCause(slotCtx, z.env.budget, fmt.Errorf("%w (%v)", ErrBudgetExhausted, z.env.budget))
	c, err := sidecar.Start(ctx, z.pkg, z.env.options(z.own))
	cancel()
	a.Start = time.Since(a.At)
	if err == nil {
		a.Spawn = c.Spawned().Sub(a.At)
		a.Handshake = a.Start - a.Spawn
	}
	var drifted *DriftError
	if err == nil {
		if diffs := drift(z.declared, c.Declarations(), z.origin, z.priority()); len(diffs) > 0 {
			drifted = &DriftError{Plugin: z.pkg.Name, Origin: z.origin, Differences: diffs}
			err = drifted
			_ = c.Close(context.Background())
			z.env.cache.forget(z.pkg.Name)
		}
	}
	z.mu.Lock()
	switch {
	case z.State() == LazyClosed:
		if err == nil {
			err = ErrSlotClosed
			defer c.Close(context.Background())
		}
	case drifted != nil:
		z.state.Store(int32(LazyFailed))
		z.mu.err = fmt.Errorf("plugin %q: %w", z.pkg.Name, drifted)
	case err != nil:
		z.state.Store(int32(LazyDeclared))
	default:
		z.cur.Store(c)
		z.lastUsed.Store(time.Now().UnixNano())
		z.state.Store(int32(LazyReady))
		z.mu.last, z.mu.starts = &a, z.mu.starts+1
		z.startedAt.Store(a.At.UnixNano())
		z.firstCall.Store(0)
		z.firstPending.Store(true)
		z.armLocked()
	}
	z.mu.flight = nil
	f.err = err
	z.mu.Unlock()
	if err == nil && z.origin != OriginManifest {
		_ = z.env.cache.store(z.pkg.Name, z.key, c.Declarations())
	}
	// The host hears of the outcome before any waiting caller returns: a
	// caller that sees the failure sees it counted.
	if z.env.hooks.Started != nil {
		if err != nil {
			c = nil
		}
		z.env.hooks.Started(z.pkg.Name, c, a, err)
	}
	close(f.done)
}

// startFiles fingerprints p's files and command before a lazy member's
// spawn: a lazy member's generation fingerprint leaves them out, so that
// one never used reads no file.
func startFiles(p *pluginpkg.Package) *generation.Fingerprint {
	fp := generation.Fingerprint{}.WithFiles(p)
	return &fp
}

// RunningFiles returns the fingerprint of the files and command (the
// Files, FileDigests, Executable and Interpreter fields) its process was
// started from while one runs or starts, nil when none does: a plan
// compares them with the files there are now (generation.Snapshot).
func (z *Lazy) RunningFiles() *generation.Fingerprint {
	switch z.State() {
	case LazyStarting, LazyReady, LazyStopping:
		return z.files.Load()
	}
	return nil
}

// priority is the manifest's runtime priority.
func (z *Lazy) priority() int { return z.pkg.Manifest.Runtime.Priority }

// armLocked schedules the next idle check, with mu held and the state
// ready, when the member has an idle timeout.
func (z *Lazy) armLocked() {
	d := time.Duration(z.idle.Load())
	if d <= 0 {
		d = time.Second // re-read the timeout, which a reload may set
	}
	if z.mu.timer == nil {
		z.mu.timer = time.AfterFunc(d, z.checkIdle)
		return
	}
	z.mu.timer.Reset(d)
}

func (z *Lazy) stopTimerLocked() {
	if z.mu.timer != nil {
		z.mu.timer.Stop()
	}
}

// checkIdle stops the process when it has been idle for the idle timeout
// with nothing in flight, else checks again when it could be.
func (z *Lazy) checkIdle() {
	z.mu.Lock()
	if z.State() != LazyReady {
		z.mu.Unlock()
		return
	}
	idle := time.Duration(z.idle.Load())
	c := z.cur.Load()
	since := time.Since(time.Unix(0, z.lastUsed.Load()))
	if idle <= 0 || since < idle || c == nil {
		if idle > 0 && since < idle {
			z.mu.timer.Reset(idle - since)
		} else {
			z.armLocked()
		}
		z.mu.Unlock()
		return
	}
	z.state.Store(int32(LazyStopping))
	if z.inflight.Load() > 0 || c.Busy() {
		z.state.Store(int32(LazyReady))
		z.mu.timer.Reset(idle)
		z.mu.Unlock()
		return
	}
	z.cur.Store(nil)
	ch := make(chan struct{})
	z.mu.stopped = ch
	z.mu.stops++
	z.wg.Add(1)
	ctx := z.ctxLocked()
	z.mu.Unlock()
	defer z.wg.Done()
	_ = c.Close(ctx)
	z.mu.Lock()
	if z.State() == LazyStopping {
		z.state.Store(int32(LazyDeclared))
	}
	z.mu.Unlock()
	close(ch)
	if z.env.hooks.IdleStopped != nil {
		z.env.hooks.IdleStopped(z.pkg.Name, c, idle)
	}
}

// adoptStarted makes c, started by a build from the files fingerprinted
// in files, the slot's ready process.
func (z *Lazy) adoptStarted(c *sidecar.Client, files *generation.Fingerprint) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.files.Store(files)
	z.cur.Store(c)
	z.state.Store(int32(LazyReady))
	z.mu.starts++
	z.mu.last = &Activation{By: "its build (no declarations to publish it from)", At: time.Now()}
	z.armLocked()
}

// Crashed records that the process c exited on its own: the member is
// declared again (the next use starts it, if the host lets it). A stale c
// (already replaced) changes nothing.
func (z *Lazy) Crashed(c *sidecar.Client) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.cur.Load() != c || z.State() != LazyReady {
		return
	}
	z.cur.Store(nil)
	z.stopTimerLocked()
	z.state.Store(int32(LazyDeclared))
}

// Hold fails the member with err until the slot is released: no use
// starts it (a host holding it down past its crash budget).
func (z *Lazy) Hold(err error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.State() == LazyClosed {
		return
	}
	z.state.Store(int32(LazyFailed))
	z.mu.err = err
}

// Close stops the slot: no use starts the member any more, a start in
// flight is cancelled, an idle stop in flight is waited for, and the
// process, if any, is stopped. It is idempotent.
func (z *Lazy) Close(ctx context.Context) error {
	z.mu.Lock()
	if z.State() == LazyClosed {
		z.mu.Unlock()
		return nil
	}
	z.state.Store(int32(LazyClosed))
	z.stopTimerLocked()
	c := z.cur.Swap(nil)
	cancel := z.mu.cancel
	z.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	z.wg.Wait()
	if c == nil {
		return nil
	}
	if err := c.Close(ctx); !errors.Is(err, sidecar.ErrClosed) {
		return err
	}
	return nil
}
