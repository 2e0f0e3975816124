package sidecar

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// outQueue orders the frames written to the plugin's stdin. A caller
// writes its frame itself when nothing is queued or being written and the
// pipe takes the frame at once (see Client.send); otherwise frames wait here
// for the writer goroutine, which runs only while there is something to
// write: the queue starts it (spawn, called with the lock held) and it
// returns once the queue is empty. Urgent frames (pings, $/cancel) are
// written before any queued ordinary frame, so heartbeats never wait
// behind calls; the rest of a frame a caller could not finish is written
// before either.
type outQueue struct {
	spawn func() // starts the writer goroutine; called with mu held

	mu struct {
		sync.Mutex
		rest    []byte // the unwritten end of a frame a caller started
		urgent  fifo[[]byte]
		normal  fifo[queued]
		busy    bool // a caller or the writer goroutine is writing a frame
		running bool // the writer goroutine runs
		closed  bool
	}
}

type queued struct {
	id    int64 // request id, or 0 for notifications and responses
	frame []byte
}

func newOutQueue(spawn func()) *outQueue { return &outQueue{spawn: spawn} }

// pushOrTake queues frame, unless take is set and nothing is queued or
// being written: then it queues nothing and returns mine, and the caller
// holds the right to write until it calls giveBack. It fails with
// ErrClosed once the queue is closed.
func (q *outQueue) pushOrTake(urgent bool, id int64, frame []byte, take bool) (mine bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.mu.closed {
		return false, ErrClosed
	}
	if take && !q.mu.busy && q.emptyLocked() {
		q.mu.busy = true
		return true, nil
	}
	if urgent {
		q.mu.urgent.push(frame)
	} else {
		q.mu.normal.push(queued{id, frame})
	}
	q.wakeLocked()
	return false, nil
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
	}
	q.wakeLocked()
}

// remove drops the queued request with the given id and reports whether it
// was still queued (so it never reached the plugin).
func (q *outQueue) remove(id int64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mu.normal.removeFirst(func(it queued) bool { return it.id == id })
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
	q.mu.busy = true
	return frame, true
}

// done ends the writer goroutine's write of a popped frame.
func (q *outQueue) done() {
	q.mu.Lock()
	q.mu.busy = false
	q.mu.Unlock()
}

// close discards queued frames and makes later pushes fail.
func (q *outQueue) close() {
	q.mu.Lock()
	q.mu.closed = true
	q.mu.rest = nil
	q.mu.urgent, q.mu.normal = fifo[[]byte]{}, fifo[queued]{}
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

// send writes frame to stdin, or queues it for the writer goroutine
// (urgent frames ahead of the others). When nothing is queued or being
// written, the caller writes the frame itself, without blocking: the pipe
// takes it whole, or what is left of it goes to the writer goroutine, which
// writes it next (so a call never waits in a write, and the WriteStall
// bound applies as before). It fails with ErrClosed once the queue is
// closed.
func (c *Client) send(urgent bool, id int64, frame []byte) error {
	mine, err := c.out.pushOrTake(urgent, id, frame, c.direct != nil)
	if err != nil || !mine {
		return err
	}
	var rest []byte
	if n := c.direct.Write(frame); n < len(frame) {
		rest = frame[n:]
	}
	c.out.giveBack(rest)
	return nil
}

// startWriter starts the writer goroutine; the queue calls it with its
// lock held, and never once it is closed, which happens before the
// supervisor waits for the client's goroutines.
func (c *Client) startWriter() {
	c.wg.Add(1)
	go c.writeLoop()
}

// writeLoop writes the frames callers queued or left unfinished, and
// returns once there is none. Each is written whole under a deadline of
// the write stall bound; a write that stalls longer means the plugin stopped
// reading, and the plugin is stopped as wedged. A failed write closes the
// queue and stdin.
func (c *Client) writeLoop() {
	defer c.wg.Done()
	for {
		frame, ok := c.out.pop()
		if !ok {
			return
		}
		err := c.writeFrame(frame)
		c.out.done()
		if err != nil {
			if !c.out.isClosed() {
				c.fault(err)
			}
			c.stopWriter()
			return
		}
	}
}

func (c *Client) writeFrame(frame []byte) error {
	stdin := c.proc.Stdin
	if err := stdin.SetWriteDeadline(time.Now().Add(c.opts.writeStall)); err != nil {
		return fmt.Errorf("write stdin: %w", err)
	}
	if _, err := stdin.Write(frame); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("%w: a write blocked for more than %v", ErrWedged, c.opts.writeStall)
		}
		return fmt.Errorf("write stdin: %w", err)
	}
	return nil
}

// stopWriter closes the queue and stdin (the plugin sees EOF), which
// interrupts a write in progress. Closing twice is harmless.
func (c *Client) stopWriter() {
	c.out.close()
	_ = c.proc.Stdin.Close()
}
