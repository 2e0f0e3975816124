package builder

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

// Defaults of Options.PoolSize and Options.Budget.
const (
	// DefaultPoolSize is how many plugins of a build start at once.
	DefaultPoolSize = 4
	// DefaultBudget is the startup budget of one build.
	DefaultBudget = 30 * time.Second
)

// ErrBudgetExhausted is the cause of the failure of every plugin still
// starting, or not yet launched, when a batch's startup budget ran out.
var ErrBudgetExhausted = errors.New("startup budget exhausted")

// spec is one plugin of a batch: what to start and the options its client
// starts with.
type spec struct {
	pkg  *pluginpkg.Package
	opts sidecar.Options
	own  ownOptions // a lazy member's share of opts: its slot keeps it
	// cancelBatchOnFailure cancels the rest of the batch when this plugin
	// fails to start: plugins still starting or not yet launched then fail
	// with an *AbortedError. Set for a required member: the build is
	// discarded on its failure anyway, so nobody waits for the budget.
	cancelBatchOnFailure bool
	// member, when set, has its fingerprint taken (or waited for, when
	// fingerprintAhead is taking it) before the process is spawned, so
	// that the generation records the files it was started from; a lazy
	// one's leaves its files out, so they are fingerprinted on their own
	// (outcome.files).
	member *generation.Member
	lazy   bool
}

// batchOptions configure startBatch.
type batchOptions struct {
	// poolSize bounds how many plugins start at once (at least 1), and
	// budget the whole batch, shared by every plugin in it.
	poolSize int
	budget   time.Duration
	// onEvent, if set, receives progress events. Calls are serialized
	// (never concurrent) but come from the batch's goroutines; it must not
	// block.
	onEvent func(Event)
}

// outcome is what became of one spec of a batch.
type outcome struct {
	plugin string
	// state is Ready or Failed.
	state State
	// client is the running plugin, for Ready. The caller owns it.
	client  *sidecar.Client
	err     error
	elapsed time.Duration
	// files fingerprints a lazy member's files as they were just before
	// its spawn (spec.lazy).
	files *generation.Fingerprint
}

// AbortedError reports a plugin of a batch that was not launched, or whose
// start was abandoned, because a required member of the same build failed
// first: its own health is unknown, and its failure is a consequence.
type AbortedError struct {
	Plugin string
	// CancelledBy is the plugin whose failure cancelled the batch.
	CancelledBy string
	// Err is what the abandoned start returned.
	Err error
}

// Error returns `not started: required plugin "x" failed`.
func (e *AbortedError) Error() string {
	return fmt.Sprintf("not started: required plugin %q failed", e.CancelledBy)
}

// Unwrap returns what the abandoned start returned.
func (e *AbortedError) Unwrap() error { return e.Err }

// batchCancelled is the cause a batch is cancelled with when a plugin
// marked cancelBatchOnFailure failed.
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

// startBatch starts specs, at most poolSize at once, in order, under one
// startup budget shared by the whole batch (bounded also by ctx): a plugin
// that stalls delays the others by at most the budget, however many
// stall. It returns one outcome per spec, in spec order, whatever the
// completion order. Every spec has a runtime.
//
// A plugin not yet launched when the budget runs out fails with "startup
// budget exhausted before launch". startBatch decides nothing about a
// failure: it reports it, and cancels the rest of the batch only for a
// spec marked cancelBatchOnFailure. The caller owns every client of a
// ready outcome and must close it (CloseAll).
func startBatch(ctx context.Context, specs []spec, opts batchOptions) []outcome {
	if len(specs) == 0 { // a generation of lazy members only: no budget to time
		return nil
	}
	cctx, cancelBatch := context.WithCancelCause(ctx)
	defer cancelBatch(nil)
	bctx, cancel := context.WithTimeoutCause(cctx, opts.budget, fmt.Errorf("%w (%v)", ErrBudgetExhausted, opts.budget))
	defer cancel()

	b := &batch{onEvent: opts.onEvent, cancel: cancelBatch}
	out := make([]outcome, len(specs))
	sem := semaphore.NewWeighted(int64(opts.poolSize))
	var wg sync.WaitGroup
	for i := range specs {
		s, o := &specs[i], &out[i]
		o.plugin = s.pkg.Name
		if err := acquire(bctx, sem); err != nil {
			o.state, o.err = Failed, abortedBy(o.plugin, err)
			b.emit(Event{Plugin: o.plugin, State: Failed, Err: o.err})
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

// batch is the shared state of one startBatch.
type batch struct {
	eventMu sync.Mutex
	onEvent func(Event)
	cancel  context.CancelCauseFunc
}

func (b *batch) emit(e Event) {
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
// marked cancelBatchOnFailure cancels the rest of the batch.
func (b *batch) startOne(ctx context.Context, s *spec, o *outcome) {
	name := s.pkg.Name
	b.emit(Event{Plugin: name, State: Starting})
	if s.member != nil {
		s.member.Fingerprint()
	}
	if s.lazy {
		o.files = startFiles(s.pkg)
	}
	begin := time.Now()
	c, err := sidecar.Start(ctx, s.pkg, s.opts)
	o.elapsed = time.Since(begin)
	if err != nil {
		err = abortedBy(name, err)
		o.state, o.err = Failed, err
		if s.cancelBatchOnFailure {
			b.cancel(&batchCancelled{name})
		}
		b.emit(Event{Plugin: name, State: Failed, Elapsed: o.elapsed, Err: err})
		return
	}
	o.state, o.client = Ready, c
	b.emit(Event{Plugin: name, State: Ready, Elapsed: o.elapsed})
}

// CloseAll closes clients in parallel, each as Client.Close does, and
// returns their errors joined in the clients' order. A client that was
// already closed contributes no error.
func CloseAll(ctx context.Context, clients []*sidecar.Client) error {
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Close(ctx); !errors.Is(err, sidecar.ErrClosed) {
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
