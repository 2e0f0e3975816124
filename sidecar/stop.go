package sidecar

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
)

// exitAfterEOF is how long a plugin that closed its stdout or stdin gets
// to exit on its own (so its exit status is reported) before it is killed.
const exitAfterEOF = 500 * time.Millisecond

// pipeHoldGrace is how long the readers get to reach the end of the
// plugin's stdout and stderr once its process group is gone, before the
// host looks for other processes that still hold the pipes (a helper that
// left the group) and kills them.
const pipeHoldGrace = 100 * time.Millisecond

// drainTimeout bounds how long the readers may keep reading after the
// holders of the pipes were killed (one the host could not find or kill
// can hold them open); then the host closes its ends.
const drainTimeout = time.Second

// teardownHook, if set (by tests only, before any client starts), runs in
// supervise once the plugin is down and the writer stopped, before the
// client is terminal.
var teardownHook func()

// errClosing is the cause of life's end when Close ended it.
var errClosing = errors.New("closing")

// fault stops the plugin for the first reason it must stop (the move to
// faulted); later reasons, and any while Close runs (Close escalates
// then), are dropped. From the first fault on, calls wait for the
// *CrashError. A plugin that closed a pipe (pluginGone) gets exitAfterEOF
// to exit on its own first, waited for on the faulting goroutine (a reader
// or the writer, which are ending anyway); else, or then, the host kills
// it (the move to killed), unless its exit was seen meanwhile. A fault
// seen after the exit (in exited) only records its cause: life keeps the
// first one, so a second one there changes nothing.
func (c *Client) fault(err error) {
	c.mu.Lock()
	from, ok := c.mu.state.transition(stageFaulted)
	if !ok && from != stageExited {
		c.mu.Unlock()
		return
	}
	c.end(err) // under mu: the supervisor reads the cause once it saw the exit
	c.mu.Unlock()
	c.endInbound()
	if !ok || (pluginGone(err) && c.exitsWithin(exitAfterEOF)) {
		return
	}
	c.mu.Lock()
	_, kill := c.mu.state.transition(stageKilled)
	c.mu.Unlock()
	if kill {
		c.log.Warn("stopping plugin", "cause", err)
		_ = c.proc.Kill()
	}
}

// exitsWithin reports whether the process exited within d.
func (c *Client) exitsWithin(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.proc.Done():
		return true
	case <-t.C:
		return false
	}
}

// supervise waits for the process to exit (a fault kills it), makes sure
// the whole process group is gone and reaped, lets the readers drain, and
// then makes the client terminal. The plugin's exit is the crash, whatever
// its descendants still hold: from the moment it is seen (exited), calls
// wait for the *CrashError, and every later step is bounded.
func (c *Client) supervise() {
	c.proc.Wait()
	killed := c.exited()
	c.stopWriter()
	if teardownHook != nil {
		teardownHook()
	}
	c.proc.Reap()
	c.drainReaders()
	c.removeFiles()
	cause := c.faultCause() // a protocol error read while draining counts
	if !killed && pluginGone(cause) {
		cause = nil // the exit explains it
	}
	fire := c.finish(cause)
	c.wg.Wait()
	close(c.quiet)
	if fire != nil {
		c.opts.OnCrash(c, fire)
	}
}

// exited records the exit, the move to exited: unless Close is stopping
// the plugin (closing refuses the move), calls now wait for the
// *CrashError that finish sets rather than fail with ErrClosed while the
// client tears down, and a Close from now on only waits for the teardown.
// It reports whether the host killed the plugin for a fault (the move was
// from killed).
func (c *Client) exited() (killed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	from, ok := c.mu.state.transition(stageExited)
	return ok && from == stageKilled
}

// faultCause returns the fault that stopped the plugin, or nil. Until Close
// starts, life ends only with a fault; in closing its cause is errClosing.
func (c *Client) faultCause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.state.stage.closing() {
		return nil
	}
	return context.Cause(c.life)
}

// pluginGone reports whether a fault is the plugin closing its end of a
// pipe (stdout at EOF, stdin broken), which it does when it exits.
func pluginGone(cause error) bool {
	return errors.Is(cause, errStdoutClosed) || errors.Is(cause, syscall.EPIPE)
}

// drainReaders lets both readers reach the end of their pipes, then closes
// the host's read ends, which unblocks a reader that did not. A process
// that left the plugin's group can hold the pipes open: if the readers are
// not done within pipeHoldGrace, every process still holding one of the
// plugin's pipes is killed (Process.KillPipeHolders, Linux only), and the
// readers get drainTimeout more.
func (c *Client) drainReaders() {
	if !c.readersDoneWithin(pipeHoldGrace) {
		if pids := c.proc.KillPipeHolders(drainTimeout); len(pids) > 0 {
			c.log.Warn("killed processes that held the plugin's pipes after it exited", "pids", pids)
		}
		c.readersDoneWithin(drainTimeout)
	}
	c.proc.Stdout.Close()
	c.proc.Stderr.Close()
}

// readersDoneWithin reports whether both readers returned within d.
func (c *Client) readersDoneWithin(d time.Duration) bool {
	select {
	case <-c.readersDone:
		return true
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.readersDone:
		return true
	case <-t.C:
		return false
	}
}

// finish makes the client terminal, the move from closing to closed or
// from exited to crashed (supervise's exited left it in one of the two):
// it sets Err, which fails every pending and later call, and closes Done.
// It returns the crash to report to OnCrash, or nil.
func (c *Client) finish(cause error) *CrashError {
	c.mu.Lock()
	var crash, fire *CrashError
	if _, closed := c.mu.state.transition(stageClosed); closed {
		c.mu.err = ErrClosed
	} else {
		c.mu.state.transition(stageCrashed) // from exited
		crash = &CrashError{Plugin: c.Name(), ExitStatus: c.proc.ExitStatus(), Stderr: c.tail.snapshot(), Cause: cause}
		c.mu.err = crash
		if !c.mu.state.armed {
			crash = nil // Start reports it
		} else if c.opts.OnCrash != nil {
			fire = crash
		}
	}
	var async []*asyncCall
	for _, p := range c.mu.pending {
		if p.async != nil {
			async = append(async, p.async)
		}
	}
	clear(c.mu.pending)
	err := c.mu.err
	c.mu.Unlock()
	c.endInbound()
	close(c.dead)
	for _, a := range async {
		a.end(nil, a.c.named(a.method, err))
	}
	if crash != nil {
		c.log.Error("plugin crashed", "error", crash)
	}
	return fire
}

// isClosing reports whether Close stops, or stopped, the plugin.
func (c *Client) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.state.stage.closing()
}

// Close stops the plugin and waits until its process group is gone and
// every goroutine the client started has returned (except an OnCrash
// callback still running, so OnCrash may call Close):
//
//  1. send shutdown and wait for the answer, within the shutdown grace (2s);
//  2. close stdin and wait for the process to exit, within what is left of
//     ShutdownGrace;
//  3. SIGTERM the process group and wait the kill grace (2s);
//  4. SIGKILL the process group, wait for the exit and reap.
//
// ctx shortens the graceful steps: once it is done, Close goes straight to
// step 4, and returns an error wrapping ctx's if it had to get there. Calls pending
// when Close starts may still complete during step 1; those left fail with
// ErrClosed. Close is idempotent: later calls wait for the first to finish
// (or for their own ctx) and return its result. Closing a crashed client
// only releases its resources; Err keeps the *CrashError.
func (c *Client) Close(ctx context.Context) error {
	c.closeOnce.Do(func() {
		c.closeErr = c.stop(ctx, true)
		close(c.closeDone)
	})
	select {
	case <-c.closeDone:
		return c.closeErr
	case <-ctx.Done():
		select {
		case <-c.closeDone:
			return c.closeErr
		default:
		}
		return fmt.Errorf("plugin %q: close: %w", c.Name(), ctx.Err())
	}
}

// abort stops a plugin whose start failed. A plugin that never completed
// the handshake is not asked to shut down: it is unresponsive or gone.
func (c *Client) abort(polite bool) {
	c.closeOnce.Do(func() {
		c.closeErr = c.stop(context.Background(), polite)
		close(c.closeDone)
	})
}

// stop runs the steps Close documents.
func (c *Client) stop(ctx context.Context, polite bool) error {
	c.mu.Lock()
	_, alive := c.mu.state.transition(stageClosing) // refused once down or terminal
	if alive {
		c.end(errClosing) // the heartbeat stops
	}
	c.mu.Unlock()
	c.endInbound()
	var err error
	if alive {
		err = c.terminate(ctx, polite && c.handshook.Load())
	}
	<-c.quiet
	return err
}

// terminate escalates from shutdown to SIGKILL until the process exited.
// It returns an error when ctx ended the graceful steps early.
func (c *Client) terminate(ctx context.Context, polite bool) error {
	began := time.Now()
	c.log.Debug("stop", "pid", c.proc.PID(), "shutdown", polite)
	defer func() { c.log.Debug("stopped", "pid", c.proc.PID(), "elapsed", time.Since(began)) }()
	gctx, cancel := context.WithTimeout(ctx, c.opts.shutdownGrace)
	defer cancel()
	if polite {
		if err := c.roundTrip(gctx, wire.MethodShutdown, nil, nil, callShutdown); err != nil {
			c.log.Debug("shutdown request failed", "error", err)
		}
	} else {
		cancel()
	}
	c.stopWriter()
	if c.waitExit(gctx) {
		return nil
	}
	if ctx.Err() != nil {
		// Close's context ended the graceful steps: straight to SIGKILL,
		// as documented (a SIGTERM first could let the plugin exit in time
		// and hide that the context cut the stop short).
		return c.killNow(ctx)
	}
	if polite {
		c.log.Warn("plugin did not exit after shutdown; sending SIGTERM")
	} else {
		c.log.Debug("stopping a plugin that was not sent shutdown (no completed handshake); sending SIGTERM")
	}
	_ = c.proc.Terminate()
	kctx, kcancel := context.WithTimeout(ctx, c.opts.killGrace)
	defer kcancel()
	if c.waitExit(kctx) {
		return nil
	}
	c.log.Warn("plugin did not exit after SIGTERM; sending SIGKILL")
	return c.killNow(ctx)
}

// killNow SIGKILLs the process group and waits for the exit; it returns an
// error wrapping ctx's when ctx is why the graceful steps were cut short.
func (c *Client) killNow(ctx context.Context) error {
	_ = c.proc.Kill()
	<-c.proc.Done()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("plugin %q: close: killed: %w", c.Name(), err)
	}
	return nil
}

// waitExit reports whether the process exited before ctx was done.
func (c *Client) waitExit(ctx context.Context) bool {
	select {
	case <-c.proc.Done():
		return true
	default:
	}
	select {
	case <-c.proc.Done():
		return true
	case <-ctx.Done():
		return false
	}
}
