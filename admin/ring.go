package admin

import "sync/atomic"

// lineOverhead is what a kept or queued line is counted for besides its
// text and data (as observe.EventOverhead is for an event).
const lineOverhead = 256

// sized is a line whose memory a ring and a follower count: lineOverhead
// plus the length of its text and data.
type sized interface {
	size() int64
}

// ring keeps the last values added to it, at most n of them and at most
// maxBytes bytes in all (each value counted by its size): adding one
// evicts the oldest until it fits. A value larger than maxBytes on its
// own is not kept, and evicts nothing. It is not safe for concurrent use:
// its owner locks.
type ring[T sized] struct {
	buf             []T
	start, len      int // the oldest value's index, and how many are kept
	bytes, maxBytes int64
}

func newRing[T sized](n int, maxBytes int64) *ring[T] {
	return &ring[T]{buf: make([]T, n), maxBytes: maxBytes}
}

func (r *ring[T]) add(v T) {
	size := v.size()
	if size > r.maxBytes {
		return
	}
	for r.len == len(r.buf) || r.bytes+size > r.maxBytes {
		r.bytes -= r.buf[r.start].size()
		var zero T
		r.buf[r.start] = zero // free what it holds
		r.start = (r.start + 1) % len(r.buf)
		r.len--
	}
	r.buf[(r.start+r.len)%len(r.buf)] = v
	r.len++
	r.bytes += size
}

// all returns the kept values, oldest first, in a new slice.
func (r *ring[T]) all() []T {
	out := make([]T, 0, r.len)
	for i := range r.len {
		out = append(out, r.buf[(r.start+i)%len(r.buf)])
	}
	return out
}

// follower receives values from a publisher that never waits for it: when
// its buffer holds n values, or values of maxBytes bytes in all, offer
// closes its channel and the publisher forgets it. Only the publisher
// sends and closes, under the publisher's lock; the reader calls taken
// for each value it receives.
type follower[T sized] struct {
	ch       chan T
	maxBytes int64
	queued   atomic.Int64 // bytes sent and not yet taken
}

func newFollower[T sized](n int, maxBytes int64) *follower[T] {
	return &follower[T]{ch: make(chan T, n), maxBytes: maxBytes}
}

// offer queues v, or closes the channel when the follower fell behind; it
// reports whether the follower is still followed. It must be called with
// the publisher's lock held, for a follower the publisher still holds.
func (f *follower[T]) offer(v T) bool {
	size := v.size()
	if f.queued.Load()+size > f.maxBytes {
		close(f.ch)
		return false
	}
	f.queued.Add(size) // before the reader can take it
	select {
	case f.ch <- v:
		return true
	default:
		close(f.ch)
		return false
	}
}

// taken tells the follower that the reader received v from its channel.
func (f *follower[T]) taken(v T) { f.queued.Add(-v.size()) }
