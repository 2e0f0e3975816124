package sidecar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// send writes frame to stdin, or queues it for the writer goroutine
// (urgent frames ahead of the others). When nothing is queued or being
// written, the caller writes the frame itself, without blocking: the pipe
// takes it whole, or what is left of it goes to the writer goroutine, which
// writes it next (so a call never waits in a write, and the write stall
// bound applies as before). kind says what happens when the queue is at
// its byte budget (see frameKind): a frameWait sender waits for room,
// until ctx ends (its cause is returned) or the client is closed; an
// answer past the hard bound fails with errQueueFull. send fails with
// ErrClosed once the queue is closed.
func (c *Client) send(ctx context.Context, kind frameKind, id int64, frame []byte) error {
	if c.tracing {
		c.traceFrame("send", frame)
	}
	for {
		mine, room, err := c.out.pushOrTake(kind, id, frame, c.direct != nil, 0)
		switch {
		case err != nil:
			return err
		case room != nil:
			select {
			case <-room:
				continue
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		case mine:
			c.writeDirect(frame)
		}
		return nil
	}
}

// sendReserved sends the answer frame, for which the queue reserved
// reserved bytes (outQueue.reserve): it takes their place, so it never
// waits and is never refused for the bound. It fails only with ErrClosed
// once the queue is closed.
func (c *Client) sendReserved(frame []byte, reserved int64) error {
	if c.tracing {
		c.traceFrame("send", frame)
	}
	mine, _, err := c.out.pushOrTake(frameAnswer, 0, frame, c.direct != nil, reserved)
	if mine {
		c.writeDirect(frame)
	}
	return err
}

// writeDirect writes frame, which the caller holds the right to write
// (pushOrTake's mine), as far as the pipe takes it at once, and gives the
// rest to the writer goroutine, which writes it next.
func (c *Client) writeDirect(frame []byte) {
	var rest []byte
	if n := c.direct.Write(frame); n < len(frame) {
		rest = frame[n:]
	}
	c.out.giveBack(rest)
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
		if err == nil {
			err = c.checkBudget()
		}
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

// checkBudget returns the wedge of a plugin whose queue has stayed
// saturated (over its byte budget, or full with a sender waiting for room)
// for longer than the write stall bound: it reads its input, but more
// slowly than the host writes to it, so what the host holds for it, or
// keeps waiting, would only grow.
func (c *Client) checkBudget() error {
	over, bytes := c.out.over(time.Now())
	if over <= c.opts.writeStall {
		return nil
	}
	return fmt.Errorf("%w: its queue (%d bytes now, budget %d) stayed saturated for more than %v",
		ErrWedged, bytes, c.opts.queueBytes, c.opts.writeStall)
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
