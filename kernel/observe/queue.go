package observe

import "sync"

// Defaults of a Queue's bounds, and the fixed part of an Event's Size.
const (
	// DefaultQueueEvents is a Queue's MaxEvents when it is zero.
	DefaultQueueEvents = 1024
	// DefaultQueueBytes is a Queue's MaxBytes when it is zero: 16 MiB,
	// so that notifies, which get half of it, fit one carrying the most
	// data a plugin can send (a frame is at most 4 MiB).
	DefaultQueueBytes = 16 << 20
	// EventOverhead is what Size counts for an Event besides the text and
	// data it points to: the struct and its slot in a queue.
	EventOverhead = 256
)

// Size is what e is counted for against a byte bound: EventOverhead plus
// the lengths of its Data, its strings (Plugin, State, Message, Name,
// Capability, Method, Target) and its Err's text.
func (e Event) Size() int64 {
	n := EventOverhead + len(e.Data) + len(e.Plugin) + len(e.State) + len(e.Message) + len(e.Name) +
		len(e.Capability) + len(e.Method) + len(e.Target)
	if e.Err != nil {
		n += len(e.Err.Error())
	}
	return int64(n)
}

// Queue is a bounded first-in first-out queue of events, for a host
// whose Subscribe callback hands events to a goroutine of its own (a
// printer, a stream, an exporter). The kernel itself never queues: it
// delivers each event synchronously, from the goroutine that produced it,
// so a callback that stored events without bound would grow as fast as a
// plugin can send notifies. A callback that cannot handle an event at
// once pushes it here instead, and its goroutine takes it out.
//
// # Bounds
//
// At most MaxEvents events, of at most MaxBytes bytes in all (each
// counted by its Size), are queued. Notify events (EventNotify) may fill
// at most half of each bound: a plugin flooding notifies never crowds out
// the kernel's own events (a crash, a state change, a warning), which
// always find the other half free of notifies.
//
// # Dropping
//
// Push never waits: an event that would go over a bound is dropped, and
// counted. The newest is dropped, not the oldest: the events queued stay
// queued, in order, and a push costs the same whether the queue is full or
// not. An event larger than its budget on its own (a notify over half of
// MaxBytes) is always dropped. Take returns how many events were dropped
// since the previous Take, for the consumer to say so ("N events
// dropped"); the dropped events are not kept in any form.
//
// # Lifecycle
//
// The zero value is an empty queue with the default bounds
// (DefaultQueueEvents, DefaultQueueBytes). Set MaxEvents and MaxBytes, if
// at all, before the first Push; they MUST NOT change after it. A Queue
// MUST NOT be copied after first use. It starts no goroutine and needs no
// Close.
//
// # Concurrency
//
// A Queue is safe for concurrent use. Push takes one short lock and never
// blocks, so it may be called from a Subscribe callback. A consumer holds
// what it took while it handles it: with one batch in hand, a consumer
// holds at most twice the bounds.
type Queue struct {
	// MaxEvents bounds the events queued (zero: DefaultQueueEvents);
	// notifies get half of it, rounded down.
	MaxEvents int
	// MaxBytes bounds the sum of the Size of the events queued (zero:
	// DefaultQueueBytes); notifies get half of it.
	MaxBytes int64

	mu struct {
		sync.Mutex
		events             []Event
		bytes, notifyBytes int64
		notifies           int
		dropped            uint64
		ready              chan struct{}
	}
}

// Push queues e, or drops it when that would go over a bound (see Queue);
// it reports whether e was queued. It never blocks.
func (q *Queue) Push(e Event) bool {
	maxEvents, maxBytes := q.bounds()
	size := e.Size()
	notify := e.Type == EventNotify
	q.mu.Lock()
	defer q.mu.Unlock()
	ok := len(q.mu.events) < maxEvents && q.mu.bytes+size <= maxBytes
	if notify {
		ok = ok && q.mu.notifies < maxEvents/2 && q.mu.notifyBytes+size <= maxBytes/2
	}
	if ok {
		q.mu.events = append(q.mu.events, e)
		q.mu.bytes += size
		if notify {
			q.mu.notifies++
			q.mu.notifyBytes += size
		}
	} else {
		q.mu.dropped++
	}
	q.signalLocked()
	return ok
}

// Take removes every queued event and returns them, oldest first (nil
// when none is queued), and how many events were dropped since the
// previous Take.
func (q *Queue) Take() (events []Event, dropped uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	events, dropped = q.mu.events, q.mu.dropped
	q.mu.events, q.mu.dropped = nil, 0
	q.mu.bytes, q.mu.notifyBytes, q.mu.notifies = 0, 0, 0
	return events, dropped
}

// Ready returns a channel that receives a value after a Push, queued or
// dropped, since it last received one: a consumer waits on it, then
// calls Take. It is the same channel on every call. A value may come when
// a Take already took what it announced; Take then returns nothing.
func (q *Queue) Ready() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.readyLocked()
}

func (q *Queue) readyLocked() chan struct{} {
	if q.mu.ready == nil {
		q.mu.ready = make(chan struct{}, 1)
	}
	return q.mu.ready
}

func (q *Queue) signalLocked() {
	select {
	case q.readyLocked() <- struct{}{}:
	default:
	}
}

// bounds returns MaxEvents and MaxBytes, or their defaults.
func (q *Queue) bounds() (int, int64) {
	n, b := q.MaxEvents, q.MaxBytes
	if n <= 0 {
		n = DefaultQueueEvents
	}
	if b <= 0 {
		b = DefaultQueueBytes
	}
	return n, b
}
