//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
)

// healthEvent is one OnHealth or OnCrash call, in the order they came.
type healthEvent struct {
	what  string // "responsive", "unresponsive" or "crash"
	id    uint64
	crash *CrashError
}

// watchHealth sets short heartbeat bounds and records every OnHealth and
// OnCrash call on the returned channel.
func watchHealth(opts *Options, interval, timeout, hang time.Duration) <-chan healthEvent {
	events := make(chan healthEvent, 64)
	opts.HeartbeatInterval, opts.HeartbeatTimeout, opts.HangTimeout = interval, timeout, hang
	opts.OnHealth = func(c *Client, responsive bool) {
		events <- healthEvent{what: map[bool]string{true: "responsive", false: "unresponsive"}[responsive], id: c.ID()}
	}
	opts.OnCrash = func(c *Client, e *CrashError) { events <- healthEvent{what: "crash", id: c.ID(), crash: e} }
	return events
}

// TestHungPluginIsStopped pings plugins that stop answering after the
// handshake, one still reading stdin (hang) and one not (stop-reading), and
// checks that each is reported Unresponsive once, then stopped as a crash
// wrapping ErrUnresponsive, every report carrying the client's ID.
func TestHungPluginIsStopped(t *testing.T) {
	for _, fixture := range []string{"hang", "stop-reading"} {
		t.Run(fixture, func(t *testing.T) {
			opts, _ := testOptions(t)
			events := watchHealth(&opts, 50*time.Millisecond, 100*time.Millisecond, 400*time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			c, err := Start(ctx, installFixture(t, fixture), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer closeClient(t, c)
			var got []string
			for _, want := range []string{"unresponsive", "crash"} {
				ev := recv(t, events, want)
				got = append(got, ev.what)
				if ev.id != c.ID() {
					t.Errorf("%s reported for client %d, want %d", ev.what, ev.id, c.ID())
				}
				if ev.crash != nil && (!errors.Is(ev.crash, ErrUnresponsive) || ev.crash.ExitStatus != "signal: killed") {
					t.Errorf("crash = %v, want ErrUnresponsive and a killed process", ev.crash)
				}
			}
			if fmt.Sprint(got) != "[unresponsive crash]" || len(events) != 0 {
				t.Errorf("events = %v and %d more, want [unresponsive crash]", got, len(events))
			}
			if !errors.Is(c.Err(), ErrUnresponsive) {
				t.Errorf("Err = %v, want ErrUnresponsive", c.Err())
			}
		})
	}
}

// TestStalledPluginRecovers stalls a plugin's read loop until the test
// signals it, and checks that it is reported Unresponsive, then Responsive
// once it reads again, and is not stopped.
func TestStalledPluginRecovers(t *testing.T) {
	opts, _ := testOptions(t)
	events := watchHealth(&opts, 50*time.Millisecond, 200*time.Millisecond, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	c, err := Start(ctx, installFixture(t, "stall-once"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient(t, c)
	if ev := recv(t, events, "unresponsive"); ev.what != "unresponsive" || ev.id != c.ID() {
		t.Fatalf("first event = %+v, want unresponsive for client %d", ev, c.ID())
	}
	if err := syscall.Kill(c.PID(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if ev := recv(t, events, "responsive"); ev.what != "responsive" || ev.id != c.ID() {
		t.Fatalf("second event = %+v, want responsive for client %d", ev, c.ID())
	}
	out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "x", Input: json.RawMessage(`"back"`)})
	if err != nil || string(out) != `"back"` || c.Err() != nil {
		t.Errorf("after recovery: Invoke = %s, %v; Err = %v", out, err, c.Err())
	}
}
