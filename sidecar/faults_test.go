//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/procstat"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// TestStartFaults starts each plugin that fails before or during the
// handshake and checks the typed error, that nothing is left running and
// that OnCrash stays silent (Start's error reports it instead).
func TestStartFaults(t *testing.T) {
	tests := []struct {
		fixture string
		opts    func(*Options)
		phase   string
		check   func(t *testing.T, err error)
	}{
		{fixture: "exit-early", phase: phaseHandshake, check: func(t *testing.T, err error) {
			var ce *CrashError
			if !errors.As(err, &ce) || ce.ExitStatus != "exit status 3" || ce.Cause != nil {
				t.Errorf("err = %v, want a *CrashError with exit status 3", err)
			}
			if !strings.Contains(err.Error(), "fatal: missing configuration file") {
				t.Errorf("err = %v, want the last stderr line quoted", err)
			}
		}},
		{fixture: "no-handshake", opts: func(o *Options) { o.HandshakeTimeout = 300 * time.Millisecond }, phase: phaseHandshake,
			check: func(t *testing.T, err error) {
				if !errors.Is(err, errHandshakeTimeout) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "the host's handshake timeout") {
					t.Errorf("err = %v, want errHandshakeTimeout naming the host's timeout", err)
				}
			}},
		{fixture: "slow-handshake", phase: phaseHandshake, check: func(t *testing.T, err error) {
			if !errors.Is(err, errHandshakeTimeout) || !strings.Contains(err.Error(), "plugin \"slow-handshake\": handshake: no answer to initialize within 300ms (runtime.handshake_timeout)") {
				t.Errorf("err = %v, want errHandshakeTimeout naming runtime.handshake_timeout", err)
			}
		}},
		{fixture: "banner", phase: phaseHandshake, check: func(t *testing.T, err error) {
			var fe *wire.FrameError
			if !errors.Is(err, ErrProtocol) || !errors.As(err, &fe) || fe.Quote != strconv.Quote("Starting faulty plugin v2...") {
				t.Errorf("err = %v, want ErrProtocol with a FrameError quoting the banner", err)
			}
		}},
		{fixture: "request-first", phase: phaseHandshake, check: func(t *testing.T, err error) {
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), `request "host/info" sent before the handshake completed`) {
				t.Errorf("err = %v, want ErrProtocol naming the early request", err)
			}
		}},
		{fixture: "wrong-id", phase: phaseHandshake, check: func(t *testing.T, err error) {
			if !errors.Is(err, ErrProtocol) || errors.Is(err, errHandshakeTimeout) ||
				!strings.Contains(err.Error(), "protocol error: initialize answered id 999; expected 1") {
				t.Errorf("err = %v, want ErrProtocol naming the wrong id", err)
			}
		}},
		{fixture: "init-error", phase: phaseHandshake, check: func(t *testing.T, err error) {
			var pe *protocol.Error
			if !errors.As(err, &pe) || pe.Code != protocol.CodePluginError || !strings.Contains(err.Error(), `plugin "init-error": handshake: initialize failed: bad config: missing key (code -32000)`) {
				t.Errorf("err = %v, want the plugin's *protocol.Error", err)
			}
		}},
		{fixture: "bad-version", phase: phaseVersion, check: func(t *testing.T, err error) {
			var ve *protocol.VersionError
			if !errors.As(err, &ve) || !strings.Contains(ve.Error(), "plugin wants protocol 2.0.0 but") || ve.Upgrade != "host" {
				t.Errorf("err = %v, want a *protocol.VersionError asking to upgrade the host", err)
			}
		}},
		{fixture: "undeclared", phase: phaseDeclarations, check: func(t *testing.T, err error) {
			var de *declarationError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want a *declarationError", err)
			}
			want := []string{
				`interceptors[1]: point "secret.point" is not listed in runtime.intercepts`,
				`strategies[0]: slot "other.slot" is not listed in runtime.replaces`,
				`provides[0]: capability "test.faulty" version "9.9.9" is not the manifest's ("1.0.0")`,
				`provides[1]: capability "not.mine" is not listed in provides`,
			}
			if !slices.Equal(de.problems, want) {
				t.Errorf("problems =\n%s\nwant\n%s", strings.Join(de.problems, "\n"), strings.Join(want, "\n"))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			opts, _ := testOptions(t)
			opts.shutdownGrace, opts.killGrace = 500*time.Millisecond, 500*time.Millisecond
			opts.OnCrash = func(_ *Client, e *CrashError) { t.Errorf("OnCrash called for a failed start: %v", e) }
			if tt.opts != nil {
				tt.opts(&opts)
			}
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			c, err := Start(ctx, installFixture(t, tt.fixture), opts)
			var se *StartError
			if c != nil || !errors.As(err, &se) || se.Plugin != tt.fixture || se.Phase != tt.phase {
				t.Fatalf("Start = %v, %v; want a %s StartError", c, err, tt.phase)
			}
			tt.check(t, err)
			assertNoProcesses(t)
		})
	}
}

// TestRunningFaults starts plugins that misbehave after the handshake and
// checks that the pending call fails with the *CrashError, that OnCrash
// fires exactly once with it, and that Close leaves nothing behind.
func TestRunningFaults(t *testing.T) {
	tests := []struct {
		fixture string
		opts    func(*Options)
		input   json.RawMessage
		check   func(t *testing.T, ce *CrashError)
	}{
		{fixture: "invalid-json", check: func(t *testing.T, ce *CrashError) {
			var fe *wire.FrameError
			if !errors.Is(ce, ErrProtocol) || !errors.As(ce, &fe) || !strings.Contains(fe.Quote, "oops") {
				t.Errorf("err = %v, want ErrProtocol with a FrameError quoting the line", ce)
			}
		}},
		{fixture: "duplicate-id", check: func(t *testing.T, ce *CrashError) {
			var fe *wire.FrameError
			if !errors.Is(ce, ErrProtocol) || !errors.Is(ce, wire.ErrDuplicateMember) || !errors.As(ce, &fe) ||
				!strings.Contains(ce.Error(), `invalid message: duplicate member "id"`) {
				t.Errorf("err = %v, want ErrProtocol wrapping ErrDuplicateMember", ce)
			}
		}},
		{fixture: "oversized", opts: func(o *Options) { o.maxFrame = 1 << 20 }, check: func(t *testing.T, ce *CrashError) {
			if !errors.Is(ce, ErrProtocol) || !errors.Is(ce, wire.ErrFrameTooLarge) {
				t.Errorf("err = %v, want ErrProtocol wrapping ErrFrameTooLarge", ce)
			}
		}},
		{fixture: "crash-in-call", check: func(t *testing.T, ce *CrashError) {
			if ce.ExitStatus != "exit status 2" || ce.Cause != nil || !slices.Contains(ce.Stderr, "panic: boom in provider/invoke") {
				t.Errorf("err = %#v, want exit status 2 and the panic line", ce)
			}
		}},
		{fixture: "stop-reading", opts: func(o *Options) { o.writeStall = 200 * time.Millisecond },
			input: json.RawMessage(`"` + strings.Repeat("y", 1<<20) + `"`),
			check: func(t *testing.T, ce *CrashError) {
				if !errors.Is(ce, ErrWedged) || ce.ExitStatus != "signal: killed" {
					t.Errorf("err = %v, want ErrWedged and a killed process", ce)
				}
			}},
		{fixture: "close-stdout", check: func(t *testing.T, ce *CrashError) {
			if !errors.Is(ce, errStdoutClosed) || ce.ExitStatus != "signal: killed" {
				t.Errorf("err = %v, want errStdoutClosed and a killed process", ce)
			}
		}},
		{fixture: "hang", opts: func(o *Options) {
			o.HeartbeatInterval, o.HeartbeatTimeout, o.HangTimeout = 100*time.Millisecond, 300*time.Millisecond, 600*time.Millisecond
		},
			check: func(t *testing.T, ce *CrashError) {
				if !errors.Is(ce, ErrUnresponsive) || ce.ExitStatus != "signal: killed" {
					t.Errorf("err = %v, want ErrUnresponsive and a killed process", ce)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			opts, _ := testOptions(t)
			crashes := make(chan *CrashError, 2)
			opts.OnCrash = func(_ *Client, e *CrashError) { crashes <- e }
			if tt.opts != nil {
				tt.opts(&opts)
			}
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			c, err := Start(ctx, installFixture(t, tt.fixture), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer closeClient(t, c)
			_, err = c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "x", Input: tt.input})
			var ce *CrashError
			if !errors.As(err, &ce) || ce.Plugin != tt.fixture {
				t.Fatalf("call err = %v, want a *CrashError", err)
			}
			tt.check(t, ce)
			if got := recv(t, crashes, "OnCrash"); got != ce {
				t.Errorf("OnCrash got %v, want the call's error", got)
			}
			<-c.Done()
			if c.Err() != error(ce) {
				t.Errorf("Err = %v, want the crash", c.Err())
			}
			if err := ping(c, ctx); err != error(ce) {
				t.Errorf("Ping after crash = %v, want the crash", err)
			}
			closeClient(t, c)
			if c.Err() != error(ce) {
				t.Errorf("Err after Close = %v, want the crash kept", c.Err())
			}
			if len(crashes) != 0 {
				t.Errorf("OnCrash fired more than once")
			}
		})
	}
}

func TestCallNeverAnswered(t *testing.T) {
	opts, _ := testOptions(t)
	opts.callTimeout = time.Hour // so that only the bounds under test can end a call
	notes := make(chan wire.NotifyParams, 1)
	opts.OnNotify = func(_ *Client, event string, data json.RawMessage) {
		notes <- wire.NotifyParams{Event: event, Data: data}
	}
	c, err := Start(context.Background(), installFixture(t, "no-answer"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient(t, c)
	type key struct{}
	// Each way of bounding a call: the caller's deadline, WithCallTimeout
	// (also under a derived context, and under a later or an earlier
	// deadline of the caller's); each ends with the deadline and $/cancel.
	for i, tt := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"context deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 300*time.Millisecond)
		}},
		{"WithCallTimeout", func() (context.Context, context.CancelFunc) {
			return WithCallTimeout(context.Background(), 300*time.Millisecond), func() {}
		}},
		{"WithCallTimeout under a value", func() (context.Context, context.CancelFunc) {
			return context.WithValue(WithCallTimeout(context.Background(), 300*time.Millisecond), key{}, 1), func() {}
		}},
		{"WithCallTimeout before the caller's deadline", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			return WithCallTimeout(ctx, 300*time.Millisecond), cancel
		}},
		{"caller's deadline before WithCallTimeout", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			return WithCallTimeout(ctx, time.Hour), cancel
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			began := time.Now()
			_, err = c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "x"})
			if took := time.Since(began); took > within {
				t.Fatalf("the call took %v: the 300ms bound did not end it", took)
			}
			if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), `plugin "no-answer": provider/invoke: `) {
				t.Fatalf("err = %v, want the deadline, naming plugin and method", err)
			}
			// The raw plugin reports each $/cancel it receives; the
			// calls are requests 2, 3, ... after initialize.
			want := strconv.Itoa(2 + i)
			if n := recv(t, notes, "$/cancel report"); n.Event != "cancelled" || string(n.Data) != want {
				t.Errorf("notification = %+v, want cancelled %s", n, want)
			}
		})
	}
	pctx, pcancel := context.WithTimeout(context.Background(), within)
	defer pcancel()
	if err := ping(c, pctx); err != nil || c.Err() != nil {
		t.Errorf("after an unanswered call: Ping = %v, Err = %v", err, c.Err())
	}
}

func TestIgnoresSIGTERM(t *testing.T) {
	opts, logs := testOptions(t)
	opts.shutdownGrace, opts.killGrace = 200*time.Millisecond, 200*time.Millisecond
	c, err := Start(context.Background(), installFixture(t, "ignore-sigterm"), opts)
	if err != nil {
		t.Fatal(err)
	}
	closeClient(t, c)
	if !processGone(c.PID()) {
		t.Errorf("process %d exists after Close", c.PID())
	}
	if s := logs.String(); !strings.Contains(s, "sending SIGTERM") || !strings.Contains(s, "sending SIGKILL") {
		t.Errorf("log does not show the escalation:\n%s", s)
	}
}

func TestGrandchildIsKilled(t *testing.T) {
	opts, _ := testOptions(t)
	c, err := Start(context.Background(), installFixture(t, "grandchild"), opts)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(opts.DataRoot, "grandchild", "grandchild.pid"))
	if err != nil {
		t.Fatal(err)
	}
	gpid, err := strconv.Atoi(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(gpid, 0); err != nil {
		t.Fatalf("grandchild %d not running before Close: %v", gpid, err)
	}
	if st, _ := procstat.Read(gpid); st.PGRP != c.PID() {
		t.Fatalf("grandchild is in process group %d, want the plugin's %d", st.PGRP, c.PID())
	}
	closeClient(t, c)
	if !processGone(gpid) {
		t.Errorf("grandchild %d exists after Close", gpid)
	}
}

func TestStderrFlood(t *testing.T) {
	opts, logs := testOptions(t)
	opts.logRate = -1 // every line is forwarded (TestLogRateLimit limits them)
	c, err := Start(context.Background(), installFixture(t, "flood-stderr"), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	// The plugin answers once it wrote every line: the host kept reading.
	out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "x"})
	if err != nil || string(out) != `"flooded"` {
		t.Fatalf("call during flood = %s, %v", out, err)
	}
	if err := ping(c, ctx); err != nil {
		t.Fatal(err)
	}
	closeClient(t, c)
	tail := c.StderrTail()
	if len(tail) != defaultStderrLines || tail[len(tail)-1] != "flood done" || tail[0] != `{"@level":"debug","@message":"json line","n":19981}` {
		t.Errorf("tail = %q", tail)
	}
	s := logs.String()
	if !strings.Contains(s, `"@level":"debug","@message":"json line","@module":"host.flood-stderr"`) || !strings.Contains(s, `"n":19999`) {
		t.Error("JSON stderr lines not forwarded at their level with their fields")
	}
	if !strings.Contains(s, `"@level":"info","@message":"plain line 19998`) {
		t.Error("plain stderr lines not forwarded at info")
	}
}

// TestOnCrashMayClose checks that OnCrash may call Close on its client
// without deadlocking.
func TestOnCrashMayClose(t *testing.T) {
	opts, _ := testOptions(t)
	var client atomic.Pointer[Client]
	closed := make(chan error, 1)
	opts.OnCrash = func(*Client, *CrashError) {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		closed <- client.Load().Close(ctx)
	}
	c, err := Start(context.Background(), installFixture(t, "crash-in-call"), opts)
	if err != nil {
		t.Fatal(err)
	}
	client.Store(c)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if _, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "x"}); err == nil {
		t.Fatal("call succeeded on a crashing plugin")
	}
	if err := recv(t, closed, "Close from OnCrash"); err != nil {
		t.Errorf("Close from OnCrash: %v", err)
	}
	closeClient(t, c)
}

// TestClientIDInCrashReports starts the same package twice, crashing each
// process, and checks that the clients have different IDs and that each
// crash report carries its own client.
func TestClientIDInCrashReports(t *testing.T) {
	opts, _ := testOptions(t)
	crashes := make(chan *Client, 2)
	opts.OnCrash = func(c *Client, _ *CrashError) { crashes <- c }
	pkg := installFixture(t, "crash-in-call")
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var ids []uint64
	for range 2 {
		c, err := Start(ctx, pkg, opts)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "x"})
		var ce *CrashError
		if !errors.As(err, &ce) {
			t.Errorf("call err = %#v, want a *CrashError", err)
		}
		if got := recv(t, crashes, "OnCrash"); got != c || got.ID() != c.ID() {
			t.Errorf("OnCrash reported client %d, want %d", got.ID(), c.ID())
		}
		closeClient(t, c)
		ids = append(ids, c.ID())
	}
	if ids[0] == 0 || ids[0] == ids[1] {
		t.Errorf("client IDs = %v, want two different non-zero IDs", ids)
	}
}
