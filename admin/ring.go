package admin

// ring keeps the last n values added to it. It is not safe for concurrent
// use: its owner locks.
type ring[T any] struct {
	buf  []T
	next int
	full bool
}

func newRing[T any](n int) *ring[T] { return &ring[T]{buf: make([]T, n)} }

func (r *ring[T]) add(v T) {
	r.buf[r.next] = v
	r.next = (r.next + 1) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
}

// all returns the kept values, oldest first, in a new slice.
func (r *ring[T]) all() []T {
	if !r.full {
		return append([]T(nil), r.buf[:r.next]...)
	}
	out := make([]T, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}

// follower receives values from a publisher that never waits for it: when
// its buffer is full, offer closes its channel and the publisher forgets
// it. Only the publisher sends and closes, under the publisher's lock.
type follower[T any] struct {
	ch chan T
}

func newFollower[T any](buf int) *follower[T] { return &follower[T]{ch: make(chan T, buf)} }

// offer queues v, or closes the channel when the follower fell behind; it
// reports whether the follower is still followed. It must be called with
// the publisher's lock held, for a follower the publisher still holds.
func (f *follower[T]) offer(v T) bool {
	select {
	case f.ch <- v:
		return true
	default:
		close(f.ch)
		return false
	}
}
