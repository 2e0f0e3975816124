package sidecar

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// outQueue holds encoded frames waiting for the writer goroutine. Urgent
// frames (pings, $/cancel) are written before any queued ordinary frame, so
// heartbeats never wait behind calls.
type outQueue struct {
	wake chan struct{} // capacity 1: something was queued or the queue closed

	mu struct {
		sync.Mutex
		urgent fifo[[]byte]
		normal fifo[queued]
		closed bool
	}
}

type queued struct {
	id    int64 // request id, or 0 for notifications and responses
	frame []byte
}

func newOutQueue() *outQueue { return &outQueue{wake: make(chan struct{}, 1)} }

// push queues frame; it fails with ErrClosed once the queue is closed.
func (q *outQueue) push(urgent bool, id int64, frame []byte) error {
	q.mu.Lock()
	if q.mu.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	if urgent {
		q.mu.urgent.push(frame)
	} else {
		q.mu.normal.push(queued{id, frame})
	}
	q.mu.Unlock()
	q.signal()
	return nil
}

func (q *outQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// remove drops the queued request with the given id and reports whether it
// was still queued (so it never reached the plugin).
func (q *outQueue) remove(id int64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mu.normal.removeFirst(func(it queued) bool { return it.id == id })
}

// pop returns the next frame, urgent ones first. ok is false when the queue
// is empty; closed reports whether it was closed.
func (q *outQueue) pop() (frame []byte, ok, closed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.mu.closed {
		return nil, false, true
	}
	if frame, ok = q.mu.urgent.pop(); ok {
		return frame, true, false
	}
	if it, ok := q.mu.normal.pop(); ok {
		return it.frame, true, false
	}
	return nil, false, false
}

// close discards queued frames and makes later pushes fail.
func (q *outQueue) close() {
	q.mu.Lock()
	q.mu.closed = true
	q.mu.urgent, q.mu.normal = fifo[[]byte]{}, fifo[queued]{}
	q.mu.Unlock()
	q.signal()
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

// writeLoop is the client's only writer of stdin. Each frame is written
// whole under a deadline of Options.WriteStall; a write that stalls longer
// means the plugin stopped reading, and the plugin is stopped as wedged.
// writeLoop closes stdin when the queue closes or a write fails.
func (c *Client) writeLoop() {
	defer c.wg.Done()
	defer c.stdin.Close()
	for {
		frame, ok, closed := c.out.pop()
		if closed {
			return
		}
		if !ok {
			<-c.out.wake
			continue
		}
		if err := c.writeFrame(frame); err != nil {
			if !c.out.isClosed() {
				c.fault(err)
			}
			return
		}
	}
}

func (c *Client) writeFrame(frame []byte) error {
	if err := c.stdin.SetWriteDeadline(time.Now().Add(c.opts.WriteStall)); err != nil {
		return fmt.Errorf("write stdin: %w", err)
	}
	if _, err := c.stdin.Write(frame); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("%w: a write blocked for more than %v", ErrWedged, c.opts.WriteStall)
		}
		return fmt.Errorf("write stdin: %w", err)
	}
	return nil
}

// stopWriter closes the queue and interrupts a write in progress, so the
// writer goroutine returns and closes stdin (the plugin sees EOF).
func (c *Client) stopWriter() {
	c.out.close()
	_ = c.stdin.SetWriteDeadline(time.Unix(1, 0))
}
