//go:build unix

package kernel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/builder"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// chaosKind is a kind of call TestChaos makes.
type chaosKind int

const (
	kindIntercept  chaosKind = iota // the host's interceptor chain
	kindProvider                    // the host calls a provider
	kindAction                      // the host runs an action
	kindHostCall                    // a plugin calls a host handler (capability/call)
	kindPluginCall                  // a plugin calls another plugin's provider through the host
	kindCycle                       // a plugin calls a neighbour, which calls it back, and so on
	kindStream                      // the host consumes a plugin's stream
	kindRelay                       // a plugin consumes another plugin's stream through the host
	numKinds
)

var chaosKindNames = [numKinds]string{"intercepts", "provider calls", "actions", "host calls", "plugin calls",
	"cycles", "streams", "relayed streams"}

// chaosKindStats counts the calls of one kind: all of them and those that
// succeeded; and those made between faults (every plugin the call needs
// was running when it was made, and none of them was killed or crashed
// before it returned) and those of them that succeeded.
type chaosKindStats struct {
	calls, ok, between, betweenOK atomic.Int64
}

// chaosStats counts what happened; every field is updated atomically.
type chaosStats struct {
	kinds                                                   [numKinds]chaosKindStats
	skipped, depthEnds, slowConsumers, stalls               atomic.Int64
	closedUnder                                             atomic.Int64 // calls failed by a sidecar stopped under them
	kills, crashes, starts, protocolFaults, exhausted       atomic.Int64
	notifies                                                atomic.Int64
	reloads, failedReloads, brokenReloads, explicitRestarts atomic.Int64
	timerLag                                                atomic.Int64 // the most a 10ms timer fired late, in ns
	heapPeak                                                atomic.Uint64
	violations                                              atomic.Int64
	firstViolation                                          atomic.Value // string
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
	// faults counts, per plugin, the kills and crashes it suffered: a call
	// is made between faults when the counts of the plugins it needs did
	// not change while it ran.
	faults   map[string]*atomic.Int64
	st       chaosStats
	starts   startLog
	streams  streamWatch
	log      logCounter
	heapBase uint64 // HeapInuse before the kernel started

	mu struct {
		sync.Mutex
		late    []lateCall
		classes map[string]int // failures by kind and class of error, for the log
	}
}

func newChaosRig(plugs []plug) *chaosRig {
	r := &chaosRig{plugs: plugs, required: map[string]bool{}, faults: map[string]*atomic.Int64{}}
	for _, p := range plugs {
		r.required[p.name] = p.required
		r.faults[p.name] = new(atomic.Int64)
	}
	r.mu.classes = map[string]int{}
	return r
}

// lateCall is a call that returned after its bound.
type lateCall struct {
	what string
	over time.Duration // beyond the bound
	err  error
}

func (r *chaosRig) late(c lateCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.late = append(r.mu.late, c)
}

// checkLate turns each late call into a violation, unless the test process
// was starved of CPU at least that long (a timer fired that late, see lag),
// which delays every deadline alike. It returns how many late calls it
// excused so.
func (r *chaosRig) checkLate() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	lag := time.Duration(r.st.timerLag.Load())
	excused := 0
	for _, c := range r.mu.late {
		if c.over > lag {
			r.st.violate("%s returned %v after its deadlines' bound (a timer fired at most %v late); it returned %v",
				c.what, c.over, lag, c.err)
			continue
		}
		excused++
	}
	return excused
}

// checkClosed turns the calls that failed because their sidecar was
// stopped under them (sidecar.ErrClosed) into a violation: a generation
// stops its sidecars only once its calls drained, or after the drain
// timeout, which no call's deadline comes near, unless the test process
// was starved of CPU that long.
func (r *chaosRig) checkClosed() {
	cfg := r.k.config()
	if n, lag := r.st.closedUnder.Load(), time.Duration(r.st.timerLag.Load()); n > 0 && lag < cfg.DrainTimeout-cfg.Deadlines.Provider {
		r.st.violate("%d calls failed because their sidecar was stopped under them (a timer fired at most %v late)", n, lag)
	}
}

// failed records a failed call of kind for the error classes in the log.
func (r *chaosRig) failed(kind chaosKind, err error) {
	class := chaosKindNames[kind] + ": " + errorClass(err)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.classes[class]++
}

// errorClass names what kind of error err is: a protocol error's code,
// a deadline, a plugin down, a crash, or else its text.
func errorClass(err error) string {
	var pe *protocol.Error
	var ce *sidecar.CrashError
	switch {
	case errors.As(err, &pe):
		return fmt.Sprintf("code %d", pe.Code)
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.Is(err, ErrPluginDown):
		return "plugin down"
	case errors.As(err, &ce):
		return "crash"
	case errors.Is(err, ErrUnknownTarget):
		return "unknown target"
	case errors.Is(err, sidecar.ErrFlowControl):
		return "flow control"
	}
	return fmt.Sprintf("%.100s", err.Error())
}

// errorClasses lists the failures by kind and class of error, sorted.
func (r *chaosRig) errorClasses() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lines []string
	for class, n := range r.mu.classes {
		lines = append(lines, fmt.Sprintf("%s: %d", class, n))
	}
	slices.Sort(lines)
	return "failures by kind and error:\n\t" + strings.Join(lines, "\n\t")
}

// observe counts crashes, protocol faults, exhausted budgets, starts and
// notify events, and logs starts and publishes in order for the budget
// check.
func (r *chaosRig) observe(e observe.Event) {
	switch {
	case e.Type == observe.EventNotify:
		r.st.notifies.Add(1)
	case e.Type == observe.EventPluginCrashed:
		r.st.crashes.Add(1)
		if f := r.faults[e.Plugin]; f != nil {
			f.Add(1)
		}
		if errors.Is(e.Err, sidecar.ErrProtocol) {
			r.st.protocolFaults.Add(1)
		}
	case e.Type == observe.EventPluginState && e.State == string(observe.StateFailed) && strings.HasPrefix(e.Message, "crashed "):
		r.st.exhausted.Add(1)
	case e.Type == observe.EventPlugin && e.State == string(builder.Starting):
		r.st.starts.Add(1)
		r.starts.add(startEntry{plugin: e.Plugin})
	case e.Type == observe.EventGenerationPublished:
		r.published(e)
	}
}

// published checks that the generation published is the current one and
// logs it, with the members its build started, for the budget check.
// Publishing holds the build lock: the current generation is the one
// published.
func (r *chaosRig) published(e observe.Event) {
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

// logCounter counts the bytes and lines written to it, and keeps the
// longest line's length; it discards what it counts.
type logCounter struct {
	bytes, lines, longest atomic.Int64
}

func (w *logCounter) Write(p []byte) (int, error) {
	w.bytes.Add(int64(len(p)))
	w.lines.Add(int64(bytes.Count(p, []byte{'\n'})))
	for n := int64(len(p)); n > w.longest.Load(); {
		if w.longest.CompareAndSwap(w.longest.Load(), n) {
			break
		}
	}
	return len(p), nil
}

// heapInuse returns the bytes in the heap's spans in use, after a
// collection.
func heapInuse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// sampleHeap keeps the largest HeapInuse seen, sampling it every 50ms
// until ctx is done.
func (r *chaosRig) sampleHeap(ctx context.Context) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var ms runtime.MemStats
	for {
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > r.st.heapPeak.Load() {
			r.st.heapPeak.Store(ms.HeapInuse)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
