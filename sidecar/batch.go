package sidecar

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

// Batch defaults.
const (
	// DefaultPoolSize is how many plugins of a batch start at once.
	DefaultPoolSize = 4
	// DefaultBudget is the startup budget of one batch.
	DefaultBudget = 30 * time.Second
)

// ErrBudgetExhausted is the cause of the failure of every plugin still
// starting, or not yet launched, when a batch's startup budget ran out.
var ErrBudgetExhausted = errors.New("startup budget exhausted")

// StartState is where a plugin is in a batch start.
type StartState string

// Start states reported in StartEvents and Outcomes.
const (
	StartLaunching StartState = "starting"
	StartReady     StartState = "ready"
	StartFailed    StartState = "failed"
	// StartSkipped: nothing to start (a declarative package).
	StartSkipped StartState = "skipped"
)

// StartEvent reports progress of one plugin in a batch start: starting, then
// ready or failed; or skipped, or failed without starting (not launched).
type StartEvent struct {
	Plugin string
	State  StartState
	// Elapsed is the time since the plugin was launched (zero for
	// starting, skipped, and failures before launch).
	Elapsed time.Duration
	// Err is the failure, for StartFailed.
	Err error
}

// Spec is one plugin of a batch: what to start and the options its client
// starts with.
type Spec struct {
	Plugin  Plugin
	Options Options
	// CancelBatchOnFailure cancels the rest of the batch when this plugin
	// fails to start: plugins still starting or not yet launched then fail
	// with an *AbortedError. Set it when the caller will discard the whole
	// batch on this failure anyway, so nobody waits for the budget.
	CancelBatchOnFailure bool
}

// BatchOptions configure StartBatch. The zero value is usable.
type BatchOptions struct {
	// PoolSize bounds how many plugins start at once; zero means
	// DefaultPoolSize.
	PoolSize int
	// Budget bounds the whole batch, shared by every plugin in it; zero
	// means DefaultBudget.
	Budget time.Duration
	// OnEvent, if set, receives progress events. Calls are serialized
	// (never concurrent) but come from the batch's goroutines; it must not
	// block.
	OnEvent func(StartEvent)
}

// Outcome is what became of one Spec of a batch.
type Outcome struct {
	// Plugin is the spec's Plugin.Name.
	Plugin string
	// State is StartReady, StartFailed or StartSkipped (a package without
	// runtime: no process).
	State StartState
	// Client is the running plugin, for StartReady. The caller owns it.
	Client  *Client
	Err     error
	Elapsed time.Duration
}

// AbortedError reports a plugin of a batch that was not launched, or whose
// start was abandoned, because another plugin of the same batch, marked
// Spec.CancelBatchOnFailure, failed first: its own health is unknown, and
// its failure is a consequence.
type AbortedError struct {
	Plugin string
	// CancelledBy is the plugin whose failure cancelled the batch.
	CancelledBy string
	// Err is what the abandoned start returned.
	Err error
}

// Error returns `not started: plugin "x" failed and cancelled the batch`.
func (e *AbortedError) Error() string {
	return fmt.Sprintf("not started: plugin %q failed and cancelled the batch", e.CancelledBy)
}

// Unwrap returns what the abandoned start returned.
func (e *AbortedError) Unwrap() error { return e.Err }

// batchCancelled is the cause a batch is cancelled with when a plugin
// marked Spec.CancelBatchOnFailure failed.
type batchCancelled struct{ plugin string }

func (e *batchCancelled) Error() string {
	return fmt.Sprintf("plugin %q failed and cancelled the batch", e.plugin)
}

// abortedBy returns an *AbortedError when err, plugin's failure, was caused
// by the batch being cancelled for another plugin's failure, and err
// otherwise.
func abortedBy(plugin string, err error) error {
	var bc *batchCancelled
	if errors.As(err, &bc) && bc.plugin != plugin {
		return &AbortedError{Plugin: plugin, CancelledBy: bc.plugin, Err: err}
	}
	return err
}

// StartBatch starts specs, at most PoolSize at once, in order, under one
// startup budget shared by the whole batch (BatchOptions.Budget, bounded
// also by ctx): a plugin that stalls delays the others by at most the
// budget, however many stall. It returns one Outcome per spec, in spec
// order, whatever the completion order.
//
// A plugin without runtime (no Command) is reported skipped, with no
// process. A plugin not yet launched when the budget runs out fails with "startup
// budget exhausted before launch". StartBatch decides nothing about a
// failure: it reports it, and cancels the rest of the batch only for a
// spec marked CancelBatchOnFailure. The caller owns every client of a
// ready Outcome and must close it (CloseAll).
func StartBatch(ctx context.Context, specs []Spec, opts BatchOptions) []Outcome {
	if opts.PoolSize <= 0 {
		opts.PoolSize = DefaultPoolSize
	}
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	cctx, cancelBatch := context.WithCancelCause(ctx)
	defer cancelBatch(nil)
	bctx, cancel := context.WithTimeoutCause(cctx, opts.Budget, fmt.Errorf("%w (%v)", ErrBudgetExhausted, opts.Budget))
	defer cancel()

	b := &batch{onEvent: opts.OnEvent, cancel: cancelBatch}
	out := make([]Outcome, len(specs))
	sem := semaphore.NewWeighted(int64(opts.PoolSize))
	var wg sync.WaitGroup
	for i := range specs {
		s, o := &specs[i], &out[i]
		o.Plugin = s.Plugin.Name
		if s.Plugin.declarative() {
			o.State = StartSkipped
			b.emit(StartEvent{Plugin: o.Plugin, State: StartSkipped})
			continue
		}
		if err := acquire(bctx, sem); err != nil {
			o.State, o.Err = StartFailed, abortedBy(o.Plugin, err)
			b.emit(StartEvent{Plugin: o.Plugin, State: StartFailed, Err: o.Err})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer sem.Release(1)
			b.startOne(bctx, s, o)
		}()
	}
	wg.Wait()
	return out
}

// batch is the shared state of one StartBatch.
type batch struct {
	eventMu sync.Mutex
	onEvent func(StartEvent)
	cancel  context.CancelCauseFunc
}

func (b *batch) emit(e StartEvent) {
	if b.onEvent == nil {
		return
	}
	b.eventMu.Lock()
	defer b.eventMu.Unlock()
	b.onEvent(e)
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

// startOne starts one plugin and records its outcome; the failure of a spec
// marked CancelBatchOnFailure cancels the rest of the batch.
func (b *batch) startOne(ctx context.Context, s *Spec, o *Outcome) {
	name := s.Plugin.Name
	b.emit(StartEvent{Plugin: name, State: StartLaunching})
	begin := time.Now()
	c, err := Start(ctx, s.Plugin, s.Options)
	o.Elapsed = time.Since(begin)
	if err != nil {
		err = abortedBy(name, err)
		o.State, o.Err = StartFailed, err
		if s.CancelBatchOnFailure {
			b.cancel(&batchCancelled{name})
		}
		b.emit(StartEvent{Plugin: name, State: StartFailed, Elapsed: o.Elapsed, Err: err})
		return
	}
	o.State, o.Client = StartReady, c
	b.emit(StartEvent{Plugin: name, State: StartReady, Elapsed: o.Elapsed})
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
