package sidecar

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
)

// Long calls (protocol 1.3, docs/protocol.md §5.15): a plugin's $/progress
// for a host request in flight moves the request's own timeout to the
// time of the progress plus the timeout the call started with, never past
// the call's start plus Options.MaxCallDuration (or plus its timeout, when
// that is longer). A progress costs the host a decode, a map lookup and a
// store under the client's lock: the call's timer is not touched, but
// re-armed, when it fires, for what the progresses left (extended). So a
// flood of progress costs what any flood of small frames costs, and a
// call's timer is re-armed at most about twice per timeout, however many
// progresses come: re-arming needs a progress since the timer last fired
// (else the call times out), and the next fire is a whole timeout after
// that progress.

// clock returns the due time and the latest time progress may extend it
// to of a call that starts now with its own timeout d.
func (c *Client) clock(now time.Time, d time.Duration) (due, latest time.Time) {
	due = now.Add(d)
	if c.opts.MaxCallDuration <= 0 {
		return due, due
	}
	return due, now.Add(max(d, c.opts.MaxCallDuration))
}

// maxProgressMessage bounds the part of a progress message the client
// logs, in bytes.
const maxProgressMessage = 256

// extended reports, when the own timeout of the call id fired, whether
// progress moved its due time past now, and how long it then has left:
// its timer is re-armed for that long. Otherwise the call timed out.
func (c *Client) extended(id int64) (time.Duration, bool) {
	c.mu.Lock()
	p, ok := c.mu.pending[id]
	c.mu.Unlock()
	if !ok || p.timeout == 0 {
		return 0, false
	}
	left := time.Until(p.due)
	if left <= 0 {
		return 0, false
	}
	c.rearms.Add(1)
	return left, true
}

// progress handles the plugin's $/progress, which is ignored from a
// plugin that did not announce the "progress" feature. It returns why the
// notification is malformed: params that do not decode, a fraction out
// of [0, 1], or the id of a request the host never sent. A progress for a
// request no longer in flight (answered, cancelled or timed out: the
// plugin cannot know) is dropped like a late answer. One for a request
// whose context's deadline alone bounds it (the caller's, which is never
// extended), or for a ping, extends nothing.
func (c *Client) progress(raw []byte) error {
	if !c.uses(wire.HasProgress) {
		c.unannounced(wire.HasProgress, "its $/progress is ignored: it extends no deadline")
		return nil
	}
	var p wire.ProgressParams
	if err := wire.Decode(raw, &p); err != nil {
		return fmt.Errorf("%s params: %w", wire.MethodProgress, c.redact.err(err))
	}
	if p.Fraction != nil && !(*p.Fraction >= 0 && *p.Fraction <= 1) {
		return fmt.Errorf("%s fraction %v is not in [0, 1]", wire.MethodProgress, *p.Fraction)
	}
	id, err := strconv.ParseInt(string(bytes.TrimSpace(p.ID)), 10, 64)
	if err != nil || id <= 0 || id > c.nextID.Load() {
		return fmt.Errorf("%s for request id %s, which the host never sent", wire.MethodProgress, quoteID(c.opts.Redact(string(p.ID))))
	}
	now := time.Now()
	c.mu.Lock()
	pc, ok := c.mu.pending[id]
	if ok && pc.timeout > 0 {
		due := now.Add(pc.timeout)
		if due.After(pc.latest) {
			due = pc.latest
		}
		if due.After(pc.due) {
			pc.due = due
			c.mu.pending[id] = pc
		}
	}
	c.mu.Unlock()
	c.used(wire.HasProgress)
	if !ok {
		c.log.Debug("dropping late progress", "id", id)
		return nil
	}
	if c.log.IsDebug() && c.limit.allow() {
		fraction := math.NaN()
		if p.Fraction != nil {
			fraction = *p.Fraction
		}
		c.log.Debug("progress", "id", id, "message", cutText(c.redact(p.Message), maxProgressMessage), "fraction", fraction)
	}
	return nil
}
