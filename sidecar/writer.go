package sidecar

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// outQueue orders the frames written to the plugin's stdin. A caller
// writes its frame itself when nothing is queued or being written and the
// pipe takes the frame at once (see Client.send); otherwise frames wait here
// for the writer goroutine. Urgent frames (pings, $/cancel) are written
// before any queued ordinary frame, so heartbeats never wait behind calls;
// the rest of a frame a caller could not finish is written before either.
type outQueue struct {
	wake chan struct{} // capacity 1: something was queued or the queue closed

	mu struct {
		sync.Mutex
		rest   []byte // the unwritten end of a frame a caller started
		urgent fifo[[]byte]
		normal fifo[queued]
		busy   bool // a caller or the writer goroutine is writing a frame
		closed bool
	}
}

type queued struct {
	id    int64 // request id, or 0 for notifications and responses
	frame []byte
}

func newOutQueue() *outQueue { return &outQueue{wake: make(chan struct{}, 1)} }

// pushOrTake queues frame, unless take is set and nothing is queued or
// being written: then it queues nothing and returns mine, and the caller
// holds the right to write until it calls giveBack. It fails with
// ErrClosed once the queue is closed.
func (q *outQueue) pushOrTake(urgent bool, id int64, frame []byte, take bool) (mine bool, err error) {
	q.mu.Lock()
	if q.mu.closed {
		q.mu.Unlock()
		return false, ErrClosed
	}
	if take && !q.mu.busy && q.emptyLocked() {
		q.mu.busy = true
		q.mu.Unlock()
		return true, nil
	}
	if urgent {
		q.mu.urgent.push(frame)
	} else {
		q.mu.normal.push(queued{id, frame})
	}
	q.mu.Unlock()
	q.signal()
	return false, nil
}

func (q *outQueue) emptyLocked() bool {
	return q.mu.rest == nil && q.mu.urgent.len() == 0 && q.mu.normal.len() == 0
}

// giveBack ends a caller's write: rest, if not nil, is the unwritten end
// of its frame, which the writer goroutine writes next.
func (q *outQueue) giveBack(rest []byte) {
	q.mu.Lock()
	q.mu.busy = false
	if rest != nil && !q.mu.closed {
		q.mu.rest = rest
	}
	wake := !q.emptyLocked()
	q.mu.Unlock()
	if wake {
		q.signal()
	}
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

// pop returns the next frame for the writer goroutine, which then holds
// the right to write until done: the rest of a caller's frame, then urgent
// frames, then the others. ok is false when there is nothing to write or a
// caller is writing; closed reports whether the queue was closed.
func (q *outQueue) pop() (frame []byte, ok, closed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.mu.closed:
		return nil, false, true
	case q.mu.busy:
		return nil, false, false
	case q.mu.rest != nil:
		frame, q.mu.rest = q.mu.rest, nil
	default:
		var it queued
		if frame, ok = q.mu.urgent.pop(); !ok {
			if it, ok = q.mu.normal.pop(); !ok {
				return nil, false, false
			}
			frame = it.frame
		}
	}
	q.mu.busy = true
	return frame, true, false
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

// send writes frame to stdin, or queues it for the writer goroutine
// (urgent frames ahead of the others). When nothing is queued or being
// written, the caller writes the frame itself, without blocking: the pipe
// takes it whole, or what is left of it goes to the writer goroutine, which
// writes it next (so a call never waits in a write, and the WriteStall
// bound applies as before). It fails with ErrClosed once the queue is
// closed.
func (c *Client) send(urgent bool, id int64, frame []byte) error {
	mine, err := c.out.pushOrTake(urgent, id, frame, c.stdinRaw != nil)
	if err != nil || !mine {
		return err
	}
	c.out.giveBack(c.writeNow(frame))
	return nil
}

// writeNow writes as much of frame as the pipe takes without blocking and
// returns the rest, nil when it was all written. Any error (a full pipe, an
// expired write deadline, a closed or broken pipe) leaves the rest to the
// writer goroutine, whose write reports it. Only the holder of the right
// to write calls it, so c.direct is its own.
func (c *Client) writeNow(frame []byte) (rest []byte) {
	d := &c.direct
	d.frame, d.n = frame, 0
	_ = c.stdinRaw.Write(d.write)
	n := d.n
	d.frame = nil
	if n == len(frame) {
		return nil
	}
	return frame[n:]
}

// directWrite is the state of writeNow, kept in the Client so that the
// function it passes to syscall.RawConn.Write is allocated once.
type directWrite struct {
	frame []byte
	n     int                   // bytes of frame written
	write func(fd uintptr) bool // d.writeFD, bound once
}

// writeFD writes d.frame[d.n:] to fd until it is all written or the pipe
// takes no more, and never asks to wait for the pipe.
func (d *directWrite) writeFD(fd uintptr) bool {
	for d.n < len(d.frame) {
		m, err := syscall.Write(int(fd), d.frame[d.n:])
		if m > 0 {
			d.n += m
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
	}
	return true
}

// writeLoop writes the frames callers queued or left unfinished. Each is
// written whole under a deadline of Options.WriteStall; a write that
// stalls longer means the plugin stopped reading, and the plugin is
// stopped as wedged. writeLoop closes stdin when the queue closes or a
// write fails.
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
		err := c.writeFrame(frame)
		c.out.done()
		if err != nil {
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
