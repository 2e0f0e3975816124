package kernel

import (
	"sync"
	"sync/atomic"

	"github.com/extkernel/extkernel/generation"
)

// retiredBit marks a live generation as retired in live.state; the lower
// bits count its leases.
const retiredBit = int64(1) << 62

// live is a published generation with its lease count.
type live struct {
	gen     *generation.Generation
	state   atomic.Int64
	drained chan struct{}
	once    sync.Once
	// schemas caches the providers' compiled input schemas, by provider
	// ID, for Config.ValidateProviderInput: once per generation.
	schemas sync.Map
}

func newLive(g *generation.Generation) *live {
	return &live{gen: g, drained: make(chan struct{})}
}

// acquire takes a lease unless the generation is retired.
func (l *live) acquire() bool {
	if l.state.Add(1)&retiredBit != 0 {
		l.release()
		return false
	}
	return true
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
