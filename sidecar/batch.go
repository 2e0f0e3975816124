package sidecar

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/pluginpkg"
)

// AbortedError reports a plugin of a batch that was not launched, or whose
// start was abandoned, because a required plugin of the same batch failed
// first: its own health is unknown, and its failure is a consequence.
type AbortedError struct {
	Plugin string
	// Required is the required plugin whose failure aborted the batch.
	Required string
	// Err is what the abandoned start returned.
	Err error
}

// Error returns `not started: required plugin "x" failed`.
func (e *AbortedError) Error() string {
	return fmt.Sprintf("not started: required plugin %q failed", e.Required)
}

// Unwrap returns what the abandoned start returned.
func (e *AbortedError) Unwrap() error { return e.Err }

// requiredFailed is the cause a batch is cancelled with when a required
// plugin failed; it matches errRequiredFailed.
type requiredFailed struct{ plugin string }

func (e *requiredFailed) Error() string {
	return fmt.Sprintf("%v: %q", errRequiredFailed, e.plugin)
}

func (e *requiredFailed) Is(target error) bool { return target == errRequiredFailed }

// abortedBy returns an *AbortedError when err, plugin's failure, was caused
// by the batch being cancelled for another required plugin's failure, and
// err otherwise.
func abortedBy(plugin string, err error) error {
	var rf *requiredFailed
	if errors.As(err, &rf) && rf.plugin != plugin {
		return &AbortedError{Plugin: plugin, Required: rf.plugin, Err: err}
	}
	return err
}

// Start starts pkgs, at most PoolSize at once, in package order, under one
// startup budget shared by the whole batch (ManagerOptions.Budget, bounded
// also by ctx): a plugin that stalls delays the others by at most the
// budget, however many stall. Start starts every package given, enabled
// or not; choosing them is the caller's job (see StartByName).
//
// Declarative packages (no runtime) are reported as skipped, with no
// process. A package not yet launched when the budget runs out fails with
// "startup budget exhausted before launch".
//
// The Batch lists one Result per package in package order, whatever the
// completion order. An optional plugin's failure becomes a Warning naming
// it. When a required plugin fails, the rest of the batch is cancelled, every
// client the batch started is closed, and Start returns the Batch with a
// *RequiredStartError listing every required failure. Otherwise the
// Manager owns the started clients until Close.
func (m *Manager) Start(ctx context.Context, pkgs []*pluginpkg.Package) (*Batch, error) {
	return m.start(ctx, pkgs, nil)
}

// start runs the pool over pkgs; with a closure, failures then cascade
// along its requirement edges before the policy is applied.
func (m *Manager) start(ctx context.Context, pkgs []*pluginpkg.Package, closure *capability.Closure) (*Batch, error) {
	if m.isClosed() {
		return nil, ErrClosed
	}
	rctx, failRequired := context.WithCancelCause(ctx)
	defer failRequired(nil)
	bctx, cancel := context.WithTimeoutCause(rctx, m.opts.Budget, fmt.Errorf("%w (%v)", ErrBudgetExhausted, m.opts.Budget))
	defer cancel()

	results := make([]Result, len(pkgs))
	sem := semaphore.NewWeighted(int64(m.opts.PoolSize))
	var wg sync.WaitGroup
	for i, p := range pkgs {
		r := &results[i]
		r.Package, r.Required = p, m.required(p)
		if p.Manifest != nil && p.Manifest.Runtime == nil {
			r.State, r.Declarative = StateSkipped, true
			m.emit(Event{Plugin: p.Name, State: StateSkipped})
			continue
		}
		if err := acquire(bctx, sem); err != nil {
			r.State, r.Err = StateFailed, abortedBy(p.Name, err)
			m.emit(Event{Plugin: p.Name, State: StateFailed, Err: r.Err})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer sem.Release(1)
			m.startOne(bctx, r, failRequired)
		}()
	}
	wg.Wait()
	var notes []Warning
	if closure != nil {
		notes = m.cascade(ctx, results, closure)
	}
	return m.finish(ctx, results, notes)
}

// acquire takes a pool slot, unless the batch context is done first: then it
// returns why the job was never launched.
func acquire(ctx context.Context, sem *semaphore.Weighted) error {
	if ctx.Err() == nil {
		if sem.Acquire(ctx, 1) == nil {
			if ctx.Err() == nil {
				return nil
			}
			sem.Release(1)
		}
	}
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrBudgetExhausted) {
		return fmt.Errorf("%w before launch", ErrBudgetExhausted)
	}
	return fmt.Errorf("not launched: %w", cause)
}

// startOne starts one plugin and records its result; a required failure
// cancels the rest of the batch.
func (m *Manager) startOne(ctx context.Context, r *Result, failRequired context.CancelCauseFunc) {
	name := r.Package.Name
	m.emit(Event{Plugin: name, State: StateStarting})
	opts := m.opts.Client
	if m.opts.Config != nil {
		opts.Config = m.opts.Config(r.Package)
	}
	if m.opts.Customize != nil {
		m.opts.Customize(r.Package, &opts)
	}
	begin := time.Now()
	c, err := Start(ctx, r.Package, opts)
	r.Elapsed = time.Since(begin)
	if err != nil {
		err = abortedBy(name, err)
		r.State, r.Err = StateFailed, err
		if r.Required {
			failRequired(&requiredFailed{name})
		}
		m.emit(Event{Plugin: name, State: StateFailed, Elapsed: r.Elapsed, Err: err})
		return
	}
	r.State, r.Client = StateReady, c
	m.emit(Event{Plugin: name, State: StateReady, Elapsed: r.Elapsed})
}

// finish applies the required/optional policy to a batch's results;
// notes lead the warnings.
func (m *Manager) finish(ctx context.Context, results []Result, notes []Warning) (*Batch, error) {
	b := &Batch{Results: results, Warnings: notes}
	var failures []Result
	for _, r := range results {
		switch {
		case r.State == StateReady:
			b.Clients = append(b.Clients, r.Client)
		case r.State == StateFailed && r.Required:
			failures = append(failures, r)
		case r.State == StateFailed:
			b.Warnings = append(b.Warnings, Warning{Plugin: r.Package.Name, Err: r.Err})
		}
	}
	if len(failures) > 0 {
		err := CloseAll(context.WithoutCancel(ctx), b.Clients)
		return b, errors.Join(&RequiredStartError{Failures: failures}, err)
	}
	m.mu.Lock()
	if m.mu.closed {
		m.mu.Unlock()
		return b, errors.Join(ErrClosed, CloseAll(context.WithoutCancel(ctx), b.Clients))
	}
	m.mu.clients = append(m.mu.clients, b.Clients...)
	m.mu.Unlock()
	return b, nil
}

// StartByName starts the named packages of installed and every package
// their capability closure needs (nil names: every enabled package), as
// Start does, in closure (name) order. host lists the capabilities the host
// program provides. Resolution errors (a missing or mismatched capability,
// an unknown or disabled root) are returned as the *capability.ResolveError
// before anything starts; resolution warnings lead the Batch's Warnings.
//
// Failures cascade along requirement edges: a started plugin whose
// (non-optional) requirement is provided by a plugin that failed is closed
// and fails with a *DependencyError, transitively, and the policy then
// applies to it as to any failure. A plugin whose optional requirement lost
// its provider keeps running, with a warning.
func (m *Manager) StartByName(ctx context.Context, installed *pluginpkg.Installed, host []capability.Provided, names ...string) (*Batch, error) {
	req := capability.Request{Host: host, Roots: names}
	byName := make(map[string]*pluginpkg.Package, len(installed.Packages))
	for _, p := range installed.Packages {
		req.Packages = append(req.Packages, p.Capability())
		byName[p.Name] = p
	}
	closure, err := capability.Resolve(req)
	if err != nil {
		return nil, err
	}
	if err := closure.Err(); err != nil {
		return nil, err
	}
	pkgs := make([]*pluginpkg.Package, len(closure.Members))
	for i, name := range closure.Members {
		pkgs[i] = byName[name]
	}
	b, err := m.start(ctx, pkgs, closure)
	if b != nil {
		var warns []Warning
		for _, p := range closure.Warnings() {
			warns = append(warns, Warning{Plugin: p.Package, Err: errors.New(p.Message)})
		}
		b.Warnings = append(warns, b.Warnings...)
	}
	return b, err
}

// Close closes every client the Manager started, in parallel, and makes
// later Starts fail with ErrClosed. It is idempotent; it returns the
// clients' Close errors joined.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.mu.closed = true
	clients := m.mu.clients
	m.mu.clients = nil
	m.mu.Unlock()
	return CloseAll(ctx, clients)
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.closed
}

// CloseAll closes clients in parallel, each as Client.Close does, and
// returns their errors joined in the clients' order. A client that was
// already closed contributes no error.
func CloseAll(ctx context.Context, clients []*Client) error {
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Close(ctx); !errors.Is(err, ErrClosed) {
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
