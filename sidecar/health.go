package sidecar

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
)

// heard records a sign of life: a response read from the plugin's stdout,
// to a ping or to any other request, late or not. Notifications do not
// count: a plugin whose read loop is stuck may still send them from
// another thread.
func (c *Client) heard() {
	c.lastHeard.Store(int64(time.Since(c.epoch)))
}

// silence returns how long the plugin has answered nothing.
func (c *Client) silence() time.Duration {
	return time.Since(c.epoch) - time.Duration(c.lastHeard.Load())
}

// heartbeat runs once Start succeeded (arm starts it) until a fault, Close
// or the client's end. It
// pings the plugin every HeartbeatInterval (a ping in flight delays the
// next one), reports it unresponsive when a ping goes unanswered for
// HeartbeatTimeout and responsive when a later one is answered, and stops
// the plugin with ErrUnresponsive once it has answered nothing for
// HangTimeout. It is the only caller of OnHealth, so OnHealth never runs
// concurrently for one client.
func (c *Client) heartbeat() {
	defer c.wg.Done()
	c.heard() // the handshake answer was the last traffic
	tick := time.NewTicker(c.opts.HeartbeatInterval)
	defer tick.Stop()
	hang := time.NewTimer(c.opts.HangTimeout)
	defer hang.Stop()
	responsive := true
	for {
		select {
		case <-c.life.Done():
			return
		case <-c.dead:
			return
		case <-hang.C:
		case <-tick.C:
		}
		if c.hung(hang, &responsive) {
			return
		}
		answered, ok := c.heartbeatPing()
		if !ok {
			return
		}
		c.setHealth(&responsive, answered)
		if c.hung(hang, &responsive) {
			return
		}
	}
}

// hung reports whether the plugin has answered nothing for HangTimeout, and
// then reports it unresponsive (if it was not already) and stops it.
// Otherwise it rearms hang for the rest of the time.
func (c *Client) hung(hang *time.Timer, responsive *bool) bool {
	left := c.opts.HangTimeout - c.silence()
	if left > 0 {
		hang.Reset(left)
		return false
	}
	if c.isClosing() {
		return true
	}
	c.setHealth(responsive, false)
	c.fault(fmt.Errorf("%w: no answer to anything for %v (hang timeout)", ErrUnresponsive, c.opts.HangTimeout))
	return true
}

// heartbeatPing sends one ping, bounded by HeartbeatTimeout and by what is
// left of HangTimeout. answered says whether it was answered in time; ok is
// false when the client is closing or terminal and the heartbeat must end.
func (c *Client) heartbeatPing() (answered, ok bool) {
	bound := min(c.opts.HeartbeatTimeout, c.opts.HangTimeout-c.silence())
	ctx, cancel := context.WithTimeout(context.Background(), max(bound, 0))
	defer cancel()
	err := c.roundTrip(ctx, wire.MethodPing, nil, nil, callUrgent)
	switch {
	case err == nil:
		return true, true
	case errors.Is(err, context.DeadlineExceeded) && !c.isClosing():
		return false, true
	}
	return false, false
}

// setHealth records whether the plugin is responsive and reports it to
// OnHealth if it changed.
func (c *Client) setHealth(cur *bool, responsive bool) {
	if *cur == responsive {
		return
	}
	*cur = responsive
	if !responsive {
		c.log.Warn("plugin is unresponsive: a heartbeat went unanswered", "timeout", c.opts.HeartbeatTimeout)
	} else {
		c.log.Info("plugin is responsive again")
	}
	if c.opts.OnHealth != nil {
		c.opts.OnHealth(c, responsive)
	}
}
