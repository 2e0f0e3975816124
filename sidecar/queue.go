package sidecar

import (
	"errors"
	"math"
	"sync"
	"time"
)

// frameKind says how a frame enters a client's outQueue when the queue is
// at its byte budget (Options.QueueBytes).
type frameKind int

const (
	// frameWait: a request of the host or a chunk of a stream it sends
	// (the sender can wait): it waits while the queue holds its budget.
	frameWait frameKind = iota
	// frameAnswer: an answer to one of the plugin's calls, or a request
	// sent from a reading goroutine (a relay, which must not block it):
	// it never waits, and is refused (errQueueFull) when it would take
	// the queue past its hard bound, twice the budget.
	frameAnswer
	// frameReply: a small error answer the host owes the plugin (one
	// refused for errQueueFull included): refused only past the hard
	// bound and a small slack more.
	frameReply
	// frameUrgent: a ping, a $/cancel or an ack: small, written first,
	// never refused.
	frameUrgent
)

// replySlack is how far past its hard bound a queue still takes error
// answers (frameReply): a plugin that reads nothing still gets told why
// its calls fail, within a bound.
const replySlack = 64 << 10

// errQueueFull refuses a frame that would take a plugin's queue past its
// hard bound: the plugin reads its input too slowly for what it asked.
var errQueueFull = errors.New("the host's queue for the plugin is full")

// outQueue orders the frames written to the plugin's stdin, and bounds in
// bytes what waits there. A caller writes its frame itself when nothing is
// queued or being written and the pipe takes the frame at once (see
// Client.send); otherwise frames wait here for the writer goroutine, which
// runs only while there is something to write: the queue starts it (spawn,
// called with the lock held) and it returns once the queue is empty.
// Urgent frames (pings, $/cancel, acks) are written before any queued
// ordinary frame, so heartbeats never wait behind calls; the rest of a
// frame a caller could not finish is written before either.
//
// The queue holds at most budget bytes of the frames that can wait
// (frameWait), twice that with answers (frameAnswer), and a slack more
// with small error answers (frameReply); urgent frames are not refused. A
// frame larger than the budget is taken when the queue is empty. An
// answer is counted from before it is encoded (reserve), so that the
// answers being encoded count too. The
// writer reports a queue that stays saturated (over its budget, or with a
// sender waiting for room, until it drains to half its budget) for the
// write stall bound (over): a plugin that reads too slowly.
type outQueue struct {
	spawn  func() // starts the writer goroutine; called with mu held
	budget int64

	mu struct {
		sync.Mutex
		rest      []byte // the unwritten end of a frame a caller started
		urgent    fifo[[]byte]
		normal    fifo[queued]
		bytes     int64         // of rest, the queued frames and the answers reserved
		peak      int64         // the most bytes ever queued
		overSince time.Time     // since when the queue is saturated; zero when it is not
		room      chan struct{} // closed when bytes drop, for senders waiting for room; nil when none waits
		busy      bool          // a caller or the writer goroutine is writing a frame
		running   bool          // the writer goroutine runs
		closed    bool
	}
}

type queued struct {
	id    int64 // request id, or 0 for notifications and responses
	frame []byte
}

func newOutQueue(budget int64, spawn func()) *outQueue {
	return &outQueue{budget: budget, spawn: spawn}
}

// pushOrTake queues frame, unless take is set and nothing is queued or
// being written: then it queues nothing and returns mine, and the caller
// holds the right to write until it calls giveBack. A frameWait frame that
// does not fit the budget is not queued: room is returned, a channel
// closed when the queue has drained some, after which the caller tries
// again. It fails with ErrClosed once the queue is closed, and with
// errQueueFull for a frame past its kind's bound. reserved is the bytes
// reserve counted for the frame (zero for none): the frame takes their
// place, whatever the bound, and they are given back in every case.
func (q *outQueue) pushOrTake(kind frameKind, id int64, frame []byte, take bool, reserved int64) (mine bool, room <-chan struct{}, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.mu.closed {
		return false, nil, ErrClosed // close gave the reservation back
	}
	n := int64(len(frame))
	if reserved > 0 {
		q.addLocked(-reserved)
	} else if q.mu.bytes > 0 || q.mu.busy {
		// An empty queue takes any frame, but not while a caller writes
		// one directly: the rest of that one may come back.
		switch {
		case kind == frameWait && q.mu.bytes+n > q.budget:
			if q.mu.room == nil {
				q.mu.room = make(chan struct{})
			}
			if q.mu.overSince.IsZero() {
				q.mu.overSince = time.Now() // a sender waits: saturated
			}
			return false, q.mu.room, nil
		case q.mu.bytes+n > q.hardBound(kind):
			return false, nil, errQueueFull
		}
	}
	if take && !q.mu.busy && q.emptyLocked() {
		q.mu.busy = true
		return true, nil, nil
	}
	if kind == frameUrgent {
		q.mu.urgent.push(frame)
	} else {
		q.mu.normal.push(queued{id, frame})
	}
	q.addLocked(n)
	q.wakeLocked()
	return false, nil, nil
}

// hardBound is the most bytes the queue holds with a frame of kind: for
// an answer twice the budget, for an error answer a slack more; a frame
// that can wait waits at the budget, and urgent frames are not bounded.
func (q *outQueue) hardBound(kind frameKind) int64 {
	switch kind {
	case frameAnswer:
		return 2 * q.budget
	case frameReply:
		return 2*q.budget + replySlack
	}
	return math.MaxInt64
}

// reserve counts n bytes of an answer not encoded yet as queued, so that
// the answers being encoded at once count against the queue's hard bound
// as queued ones do (each is a copy of a handler's output: up to 64 calls
// of one plugin may be answered at once), and an answer that would not
// fit is refused before it costs the host its copy. It fails as
// pushOrTake fails for a frameAnswer of n bytes: ErrClosed, or
// errQueueFull past the hard bound, an empty queue taking any answer.
// On success the caller pushes the frame, of at most n bytes, with the
// reservation (pushOrTake's reserved), or gives it back with release.
func (q *outQueue) reserve(n int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.mu.closed:
		return ErrClosed
	case (q.mu.bytes > 0 || q.mu.busy) && q.mu.bytes+n > q.hardBound(frameAnswer):
		return errQueueFull
	}
	q.addLocked(n)
	return nil
}

// overBudget reports whether the queue holds more than its budget, and how many
// bytes it holds: the plugin has that much to read before a host request
// may be sent (frameWait), and its calls are not served (Client.serveCall)
// until it reads some.
func (q *outQueue) overBudget() (bool, int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mu.bytes > q.budget, q.mu.bytes
}

// release gives back n bytes reserve counted, for a frame that will not
// be pushed. A closed queue counts nothing any more.
func (q *outQueue) release(n int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.mu.closed {
		q.addLocked(-n)
	}
}

// addLocked counts n more bytes queued (negative: written or dropped),
// notes when the queue becomes saturated and wakes the senders waiting for
// room when it shrinks. The queue is saturated from the moment it goes
// over its budget, or a sender has to wait for room, until it drains to
// half its budget: a plugin that keeps it saturated reads more slowly
// than the host writes to it.
func (q *outQueue) addLocked(n int64) {
	q.mu.bytes += n
	q.mu.peak = max(q.mu.peak, q.mu.bytes)
	switch {
	case q.mu.bytes > q.budget && q.mu.overSince.IsZero():
		q.mu.overSince = time.Now()
	case q.mu.bytes <= q.budget/2:
		q.mu.overSince = time.Time{}
	}
	if n < 0 {
		q.wakeRoomLocked()
	}
}

// wakeRoomLocked wakes the senders waiting for room: the queue shrank, or
// a write ended (a frame too large for the budget waits for both).
func (q *outQueue) wakeRoomLocked() {
	if q.mu.room != nil {
		close(q.mu.room)
		q.mu.room = nil
	}
}

// over returns how long the queue has been saturated (zero when it is
// not), as of now, and how many bytes it holds.
func (q *outQueue) over(now time.Time) (time.Duration, int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.mu.overSince.IsZero() {
		return 0, q.mu.bytes
	}
	return now.Sub(q.mu.overSince), q.mu.bytes
}

func (q *outQueue) emptyLocked() bool {
	return q.mu.rest == nil && q.mu.urgent.len() == 0 && q.mu.normal.len() == 0
}

// wakeLocked starts the writer goroutine when a frame waits, nobody
// writes and it does not run.
func (q *outQueue) wakeLocked() {
	if !q.mu.running && !q.mu.busy && !q.mu.closed && !q.emptyLocked() {
		q.mu.running = true
		q.spawn()
	}
}

// giveBack ends a caller's write: rest, if not nil, is the unwritten end
// of its frame, which the writer goroutine writes next.
func (q *outQueue) giveBack(rest []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.mu.busy = false
	if rest != nil && !q.mu.closed {
		q.mu.rest = rest
		q.addLocked(int64(len(rest)))
	}
	q.wakeRoomLocked()
	q.wakeLocked()
}

// remove drops the queued request with the given id and reports whether it
// was still queued (so it never reached the plugin).
func (q *outQueue) remove(id int64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	var n int64
	removed := q.mu.normal.removeFirst(func(it queued) bool {
		if it.id == id {
			n = int64(len(it.frame))
			return true
		}
		return false
	})
	if removed {
		q.addLocked(-n)
	}
	return removed
}

// pop returns the next frame for the writer goroutine, which then holds
// the right to write until done: the rest of a caller's frame, then urgent
// frames, then the others. ok is false when there is nothing to write, a
// caller is writing or the queue is closed: the writer goroutine then
// returns, and the queue starts it again when it is needed.
func (q *outQueue) pop() (frame []byte, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.mu.closed, q.mu.busy:
	case q.mu.rest != nil:
		frame, q.mu.rest, ok = q.mu.rest, nil, true
	default:
		var it queued
		if frame, ok = q.mu.urgent.pop(); !ok {
			it, ok = q.mu.normal.pop()
			frame = it.frame
		}
	}
	if !ok {
		q.mu.running = false
		return nil, false
	}
	q.addLocked(-int64(len(frame)))
	q.mu.busy = true
	return frame, true
}

// done ends the writer goroutine's write of a popped frame.
func (q *outQueue) done() {
	q.mu.Lock()
	q.mu.busy = false
	q.wakeRoomLocked()
	q.mu.Unlock()
}

// close discards queued frames and makes later pushes fail; senders
// waiting for room wake and find it closed.
func (q *outQueue) close() {
	q.mu.Lock()
	q.mu.closed = true
	q.mu.rest = nil
	q.mu.urgent, q.mu.normal = fifo[[]byte]{}, fifo[queued]{}
	q.addLocked(-q.mu.bytes)
	q.wakeRoomLocked()
	q.mu.Unlock()
}

func (q *outQueue) isClosed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mu.closed
}

// fifo is a queue on a slice that is reused once it empties, so a queue
// that keeps draining allocates nothing.
type fifo[T any] struct {
	items []T
	head  int // index of the first item
}

func (f *fifo[T]) len() int { return len(f.items) - f.head }

func (f *fifo[T]) push(v T) {
	if f.head > 0 && len(f.items) == cap(f.items) {
		n := copy(f.items, f.items[f.head:])
		clear(f.items[n:])
		f.items, f.head = f.items[:n], 0
	}
	f.items = append(f.items, v)
}

func (f *fifo[T]) pop() (v T, ok bool) {
	if f.head == len(f.items) {
		return v, false
	}
	v = f.items[f.head]
	var zero T
	f.items[f.head] = zero
	f.head++
	if f.head == len(f.items) {
		f.items, f.head = f.items[:0], 0
	}
	return v, true
}

// removeFirst removes the first item match accepts and reports whether
// there was one.
func (f *fifo[T]) removeFirst(match func(T) bool) bool {
	for i := f.head; i < len(f.items); i++ {
		if match(f.items[i]) {
			copy(f.items[i:], f.items[i+1:])
			var zero T
			f.items[len(f.items)-1] = zero
			f.items = f.items[:len(f.items)-1]
			if f.head == len(f.items) {
				f.items, f.head = f.items[:0], 0
			}
			return true
		}
	}
	return false
}
