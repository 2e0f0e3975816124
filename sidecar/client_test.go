//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

func startGood(t *testing.T, opts Options) *Client {
	t.Helper()
	pkg := installFixture(t, "good")
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	c, err := Start(ctx, pkg, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return c
}

func TestGoodPluginCalls(t *testing.T) {
	opts, _ := testOptions(t)
	c := startGood(t, opts)
	defer closeClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()

	d := c.Declarations()
	if d.Name != "good" || d.Version != "1.0.0" || len(d.Interceptors) != 1 || len(d.Strategies) != 1 || len(d.Providers) != 6 || len(d.Actions) != 1 {
		t.Errorf("Declarations = %+v", d)
	}
	t.Run("intercept modify", func(t *testing.T) {
		res, err := c.Intercept(ctx, "tool.before", json.RawMessage(`{"a":1}`))
		if err != nil || res.Decision != protocol.DecisionModify || string(res.Payload) != `{"seen":{"a":1}}` {
			t.Errorf("Intercept = %+v, %v", res, err)
		}
	})
	t.Run("intercept deny", func(t *testing.T) {
		res, err := c.Intercept(ctx, "tool.before", json.RawMessage(`"deny"`))
		if err != nil || res.Decision != protocol.DecisionDeny || res.Reason != "denied by good" {
			t.Errorf("Intercept = %+v, %v", res, err)
		}
	})
	t.Run("invoke", func(t *testing.T) {
		tests := []struct {
			method string
			params any
			want   string
		}{
			{wire.MethodStrategyInvoke, wire.StrategyInvokeParams{Slot: "context.compactor", Input: json.RawMessage(`[1,2]`)}, `{"compacted":[1,2]}`},
			{wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "echo", Input: json.RawMessage(`"hi"`)}, `"hi"`},
			{wire.MethodActionRun, wire.ActionRunParams{ID: "greet"}, `"hello"`},
		}
		for _, tt := range tests {
			out, err := c.Invoke(ctx, tt.method, tt.params)
			if err != nil || string(out) != tt.want {
				t.Errorf("Invoke(%s) = %s, %v; want %s", tt.method, out, err, tt.want)
			}
		}
	})
	t.Run("remote error", func(t *testing.T) {
		_, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "fail"})
		var pe *protocol.Error
		if !errors.As(err, &pe) || pe.Code != protocol.CodePluginError || !strings.HasPrefix(err.Error(), `plugin "good": provider/invoke: failed on purpose`) {
			t.Errorf("err = %v, want a wrapped *protocol.Error", err)
		}
		_, err = c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "nope"})
		if !errors.As(err, &pe) || pe.Code != protocol.CodeUnknownTarget {
			t.Errorf("unknown ref: err = %v, want code %d", err, protocol.CodeUnknownTarget)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make([]error, 32)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				in := json.RawMessage(fmt.Sprintf(`%d`, i))
				out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "echo", Input: in})
				if err == nil && string(out) != string(in) {
					err = fmt.Errorf("call %d got %s", i, out)
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Error(err)
		}
	})
	t.Run("ping", func(t *testing.T) {
		if err := ping(c, ctx); err != nil {
			t.Error(err)
		}
	})
}

func TestEnvironmentAndWorkingDirectory(t *testing.T) {
	t.Setenv("SIDECAR_TEST_SECRET", "must-not-leak")
	t.Setenv("LANG", "C.UTF-8")
	opts, _ := testOptions(t)
	c := startGood(t, opts)
	defer closeClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "env"})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Env []string
		Cwd string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Cwd != c.pkg.Dir {
		t.Errorf("cwd = %q, want the package directory %q", got.Cwd, c.pkg.Dir)
	}
	allowed := append(wire.AllowedHostEnv(), "GOOD_SETTING",
		wire.EnvPluginName, wire.EnvPluginVersion, wire.EnvPluginDir, wire.EnvDataDir, wire.EnvProtocolVersion)
	env := map[string]string{}
	for _, kv := range got.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
		if !slices.Contains(allowed, k) {
			t.Errorf("plugin environment has %s, which is not allowed", kv)
		}
	}
	want := map[string]string{
		"LANG":                  "C.UTF-8",
		"GOOD_SETTING":          "on",
		wire.EnvPluginName:      "good",
		wire.EnvPluginVersion:   "1.0.0",
		wire.EnvPluginDir:       c.pkg.Dir,
		wire.EnvDataDir:         filepath.Join(opts.DataRoot, "good"),
		wire.EnvProtocolVersion: protocol.Version,
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
}

func TestNotifyAndLogs(t *testing.T) {
	opts, logs := testOptions(t)
	notes := make(chan wire.NotifyParams, 1)
	opts.OnNotify = func(nc *Client, event string, data json.RawMessage) {
		plugin, n := nc.Name(), wire.NotifyParams{Event: event, Data: data}
		if plugin == "good" {
			notes <- n
		}
	}
	c := startGood(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if _, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "notify", Input: json.RawMessage(`"x"`)}); err != nil {
		t.Fatal(err)
	}
	if n := recv(t, notes, "notify"); n.Event != "hello" || string(n.Data) != `"x"` {
		t.Errorf("notify = %+v", n)
	}
	closeClient(t, c) // drains stderr
	var found bool
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["@message"] != "notifying" {
			continue
		}
		found = true
		if rec["@level"] != "warn" || rec["@module"] != "host.good" || rec["input"] != `"x"` {
			t.Errorf("forwarded log record = %v, want level warn, module host.good, input field", rec)
		}
	}
	if !found {
		t.Error("the plugin's hclog JSON line was not forwarded")
	}
}

func TestLogNotification(t *testing.T) {
	opts, logs := testOptions(t)
	c, err := Start(context.Background(), installFixture(t, "well-behaved"), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if _, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "log"}); err != nil {
		t.Fatal(err)
	}
	closeClient(t, c)
	if s := logs.String(); !strings.Contains(s, `"@level":"warn","@message":"from plugin","@module":"host.well-behaved"`) || !strings.Contains(s, `"k":"v"`) {
		t.Errorf("log notification not forwarded at warn with fields:\n%s", s)
	}
}

// TestCancellation checks that cancelling a call and its deadline passing
// both return at once, send $/cancel (the plugin's handler sees its context
// cancelled and notifies), and leave the client healthy with the late
// answer dropped.
func TestCancellation(t *testing.T) {
	opts, _ := testOptions(t)
	notes := make(chan wire.NotifyParams, 4)
	opts.OnNotify = func(_ *Client, event string, data json.RawMessage) {
		notes <- wire.NotifyParams{Event: event, Data: data}
	}
	c := startGood(t, opts)
	defer closeClient(t, c)
	block := func(ctx context.Context, in string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "block", Input: json.RawMessage(in)})
			done <- err
		}()
		return done
	}
	expect := func(event, in string) {
		t.Helper()
		if n := recv(t, notes, event); n.Event != event || string(n.Data) != in {
			t.Errorf("notification = %s %s, want %s %s", n.Event, n.Data, event, in)
		}
	}

	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := block(ctx, "1")
		expect("blocking", "1")
		cancel()
		if err := recv(t, done, "call result"); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		expect("cancelled", "1")
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 1e9)
		defer cancel()
		done := block(ctx, "2")
		expect("blocking", "2")
		if err := recv(t, done, "call result"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want context.DeadlineExceeded", err)
		}
		expect("cancelled", "2")
	})
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "echo", Input: json.RawMessage(`3`)}); err != nil || string(out) != "3" || c.Err() != nil {
		t.Errorf("after cancellations: echo = %s, %v; Err = %v", out, err, c.Err())
	}
}

func TestCloseIsIdempotentAndFinal(t *testing.T) {
	opts, _ := testOptions(t)
	crashes := make(chan *CrashError, 1)
	opts.OnCrash = func(_ *Client, e *CrashError) { crashes <- e }
	c := startGood(t, opts)
	closeClient(t, c)
	closeClient(t, c)
	if !errors.Is(c.Err(), ErrClosed) {
		t.Errorf("Err after Close = %v, want ErrClosed", c.Err())
	}
	select {
	case <-c.Done():
	default:
		t.Error("Done not closed after Close")
	}
	if err := ping(c, context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Ping after Close = %v, want ErrClosed", err)
	}
	if processGone(c.PID()) == false {
		t.Errorf("plugin process %d still exists after Close", c.PID())
	}
	select {
	case e := <-crashes:
		t.Errorf("OnCrash called for a closed plugin: %v", e)
	default:
	}
}

// TestCloseDuringCalls closes a client while calls are in flight: each
// ends with the plugin's answer or ErrClosed, never hangs.
func TestCloseDuringCalls(t *testing.T) {
	opts, _ := testOptions(t)
	started := make(chan struct{}, 8)
	opts.OnNotify = func(_ *Client, event string, data json.RawMessage) {
		n := wire.NotifyParams{Event: event, Data: data}
		if n.Event == "blocking" {
			started <- struct{}{}
		}
	}
	c := startGood(t, opts)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			_, err := c.Invoke(context.Background(), wire.MethodProviderInvoke,
				wire.ProviderInvokeParams{Ref: "block", Input: json.RawMessage(fmt.Sprint(i))})
			errs <- err
		}()
	}
	for range 8 {
		recv(t, started, "call in flight")
	}
	closeClient(t, c)
	for range 8 {
		err := recv(t, errs, "call result")
		// The SDK answers handlers cancelled by its shutdown drain with an
		// error (the code is the SDK's business); later ones see the close.
		var pe *protocol.Error
		if !errors.Is(err, ErrClosed) && !errors.As(err, &pe) {
			t.Errorf("call during Close: %v, want ErrClosed or the plugin's error answer", err)
		}
	}
}
