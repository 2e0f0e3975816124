package builder

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/sidecar"
)

// Running is a built generation with the clients of its members that run:
// what the kernel publishes, leases and retires. The generation is a
// value; Running owns the processes, until Close stops them or Release
// hands some to a successor that adopted them.
type Running struct {
	gen     *generation.Generation
	clients map[string]*sidecar.Client // by member name; immutable
	lazy    map[string]*Lazy           // the lazy members' slots, by name; immutable

	closeOnce sync.Once
	closeErr  error
	mu        sync.Mutex
	released  map[string]bool // under mu: clients handed to a successor
}

func newRunning(g *generation.Generation, clients map[string]*sidecar.Client, lazy map[string]*Lazy) *Running {
	return &Running{gen: g, clients: clients, lazy: lazy}
}

// Generation returns the generation, a read-only value.
func (r *Running) Generation() *generation.Generation { return r.gen }

// Client returns the client of the named member, nil when it does not
// run (declarative, failed, or no member). The client of a member that
// crashed since the build is still returned: its Done channel is closed.
// Released clients are still returned, so that calls in flight on this
// generation are unaffected.
//
// A lazy member's client is its process now (nil when it has not started,
// or was stopped idle): Lazy gives its slot.
func (r *Running) Client(name string) *sidecar.Client {
	if z := r.lazy[name]; z != nil {
		return z.Client()
	}
	return r.clients[name]
}

// Lazy returns the slot of the named lazy member, nil for an eager one
// (or no member).
func (r *Running) Lazy(name string) *Lazy { return r.lazy[name] }

// Snapshot returns the generation's snapshot with a member whose client
// has exited since the build reported as generation.StatusCrashed, and a
// lazy member as its slot is now: its status, and while its process runs
// the files it was started from (Lazy.RunningFiles), which a plan
// compares.
func (r *Running) Snapshot() *generation.Snapshot {
	s := r.gen.Snapshot()
	for i := range s.Packages {
		p := &s.Packages[i]
		if z := r.lazy[p.Name]; z != nil && p.Status != generation.StatusFailed {
			p.Status = lazyStatus(z)
			if f := z.RunningFiles(); f != nil {
				p.Fingerprint.Files, p.Fingerprint.FileDigests = f.Files, f.FileDigests
				p.Fingerprint.Executable, p.Fingerprint.Interpreter = f.Executable, f.Interpreter
			}
			continue
		}
		if c := r.clients[p.Name]; c != nil && p.Status == generation.StatusRunning {
			select {
			case <-c.Done():
				p.Status = generation.StatusCrashed
			default:
			}
		}
	}
	return s
}

// lazyStatus is a lazy member's snapshot status: running while its process
// is up, failed when it may not start, declared otherwise.
func lazyStatus(z *Lazy) generation.MemberStatus {
	switch z.State() {
	case LazyReady:
		return generation.StatusRunning
	case LazyFailed:
		return generation.StatusFailed
	}
	return generation.StatusDeclared
}

// Release gives up ownership of the named clients (or lazy slots) without
// stopping them, because a successor adopted them: Close then stops only
// the others.
// Release must be called before Close.
func (r *Running) Release(names ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.released == nil {
		r.released = map[string]bool{}
	}
	for _, n := range names {
		r.released[n] = true
	}
}

// Close stops every client the set still owns (all but the released ones),
// in parallel, and returns their errors joined in name order. It is
// idempotent.
func (r *Running) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		var owned []*sidecar.Client
		for _, name := range slices.Sorted(maps.Keys(r.clients)) {
			if !r.released[name] {
				owned = append(owned, r.clients[name])
			}
		}
		var slots []*Lazy
		for _, name := range slices.Sorted(maps.Keys(r.lazy)) {
			if !r.released[name] {
				slots = append(slots, r.lazy[name])
			}
		}
		r.mu.Unlock()
		r.closeErr = errors.Join(CloseAll(ctx, owned), closeSlots(ctx, slots))
	})
	return r.closeErr
}

// closeSlots closes lazy slots in parallel and returns their errors
// joined in the slots' order.
func closeSlots(ctx context.Context, slots []*Lazy) error {
	errs := make([]error, len(slots))
	var wg sync.WaitGroup
	for i, z := range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = z.Close(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
