package kernel

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/builder"
	"github.com/extkernel/extkernel/sidecar"
)

// retiredBit marks a live generation as retired in live.state; the lower
// bits count its leases.
const retiredBit = int64(1) << 62

// live is a published generation, the running set that owns its
// processes, and its lease count. The kernel reaches a plugin only through
// its live (client, running), and calls it only under a lease.
type live struct {
	gen     *generation.Generation // run.Generation()
	run     *builder.Running
	state   atomic.Int64
	drained chan struct{}
	once    sync.Once
	// stopped closes once the processes run owns are stopped; handed
	// closes once the predecessor's are (already closed for the first
	// generation). A client l adopted is still used by the calls in flight
	// on the predecessor, so l stops nothing before handed closes: each
	// generation stops after the one it took clients from.
	stopped chan struct{}
	handed  <-chan struct{}
	// schemas caches the providers' compiled input schemas, by provider
	// ID, for config.Config.ValidateProviderInput: once per generation.
	schemas sync.Map
	// routes says who may call what, and where each call goes.
	routes routes
	// roots holds the frame of the host's own requests to each member, so
	// that a dispatch tags its context without allocating: in the
	// generation's member order, which is name order (root searches it).
	roots []frame
	// stats is the kernel's counters table, which the frames look their
	// plugin's counters up in on its first call.
	stats *statsTable
}

// newLive returns r, published, with its routes (handlers serve the host's
// capabilities) and root frames, which find each member's counters in
// stats on its first call.
func newLive(r *builder.Running, handlers map[capability.Key]capability.Handler, stats *statsTable) *live {
	g := r.Generation()
	l := &live{gen: g, run: r, drained: make(chan struct{}), stopped: make(chan struct{}), handed: closedChan,
		routes: newRoutes(g, handlers), stats: stats}
	members := g.Members()
	l.roots = make([]frame, len(members)) // one allocation for every root frame
	for i, m := range members {
		l.roots[i].live, l.roots[i].plugin = l, m.Package.Name
	}
	return l
}

// closedChan is a closed channel: the handed of a generation that took no
// clients from a predecessor.
var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// client returns the client of the named member, nil when it does not run
// (declarative, failed, or no member); a crashed one's is returned, done.
func (l *live) client(plugin string) *sidecar.Client { return l.run.Client(plugin) }

// running returns the named member's client if its plugin is alive, else
// an error wrapping ErrPluginDown (and the crash, if it crashed).
func (l *live) running(plugin string) (*sidecar.Client, error) {
	c := l.client(plugin)
	if c == nil {
		return nil, ErrPluginDown
	}
	select {
	case <-c.Done():
		if err := c.Err(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrPluginDown, err)
		}
		return nil, ErrPluginDown
	default:
		return c, nil
	}
}

// root returns the frame of a host request to plugin (nil for a plugin
// that is no member).
func (l *live) root(plugin string) *frame {
	i := sort.Search(len(l.roots), func(i int) bool { return l.roots[i].plugin >= plugin })
	if i == len(l.roots) || l.roots[i].plugin != plugin {
		return nil
	}
	return &l.roots[i]
}

// acquire takes a lease unless the generation is retired.
func (l *live) acquire() bool {
	if l.state.Add(1)&retiredBit != 0 {
		l.release()
		return false
	}
	return true
}

// acquireNested takes a lease for a call made while another lease on l is
// held (the request it serves), even after l was retired: it fails only
// once l has drained. (Were the other lease returned in the meantime, the
// call would be cancelled anyway: the request it serves ended.)
func (l *live) acquireNested() bool {
	for {
		s := l.state.Load()
		if s == retiredBit {
			return false
		}
		if l.state.CompareAndSwap(s, s+1) {
			return true
		}
	}
}

// release returns a lease; the last lease of a retired generation closes
// drained.
func (l *live) release() {
	if l.state.Add(-1) == retiredBit {
		l.once.Do(func() { close(l.drained) })
	}
}

// retire refuses new leases; drained closes once the current ones return.
func (l *live) retire() {
	if l.state.Or(retiredBit) == 0 {
		l.once.Do(func() { close(l.drained) })
	}
}
