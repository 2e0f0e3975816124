//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/extkernel/extkernel/internal/wire"
)

// TestCallsDuringCrashTeardown checks that calls made while a crashed
// plugin is torn down (after its exit was seen, before the client is
// terminal) wait for the *CrashError and never fail with ErrClosed. The
// test hooks hold the teardown open until each call is seen waiting.
func TestCallsDuringCrashTeardown(t *testing.T) {
	inWindow, release := make(chan struct{}), make(chan struct{})
	waiting := make(chan struct{}, 1)
	teardownHook = func() {
		close(inWindow)
		<-release
	}
	callWaitsHook = func() { waiting <- struct{}{} }
	t.Cleanup(func() { teardownHook, callWaitsHook = nil, nil })

	opts, _ := testOptions(t)
	c, err := Start(context.Background(), installFixture(t, "crash-in-call"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient(t, c)
	releaseOnce := sync.OnceFunc(func() { close(release) })
	defer releaseOnce() // before Close, which waits for the teardown
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	crashed := make(chan error, 1)
	go func() {
		_, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "x"})
		crashed <- err
	}()
	recv(t, inWindow, "teardown")
	calls := []struct {
		name string
		call func() error
	}{
		{"Ping", func() error { return ping(c, ctx) }},
		{"Call", func() error {
			return c.Call(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "x"}, nil)
		}},
		{"Intercept", func() error {
			_, err := c.Intercept(ctx, "tool.before", json.RawMessage(`{}`))
			return err
		}},
	}
	errs := make([]chan error, len(calls))
	for i, cl := range calls {
		errs[i] = make(chan error, 1)
		go func() { errs[i] <- cl.call() }()
		select {
		case err := <-errs[i]:
			t.Fatalf("%s returned during the teardown: %v", cl.name, err)
		case <-waiting:
		}
	}
	releaseOnce()
	ce := recv(t, crashed, "the crashing call's error")
	if !isCrash(ce) || c.Err() != ce {
		t.Fatalf("crashing call = %v, Err = %v; want the *CrashError", ce, c.Err())
	}
	for i, cl := range calls {
		if err := recv(t, errs[i], cl.name); err != ce {
			t.Errorf("%s during the teardown = %v, want the crash %v", cl.name, err, ce)
		}
	}
}

// TestCallsRacingCrash hammers a plugin with calls from several goroutines
// while it crashes: every call that fails, fails with the *CrashError.
func TestCallsRacingCrash(t *testing.T) {
	opts, _ := testOptions(t)
	c, err := Start(context.Background(), installFixture(t, "crash-in-call"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range cap(errs) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if err := ping(c, ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	if _, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "x"}); !isCrash(err) {
		t.Errorf("crashing call = %v, want a *CrashError", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if errors.Is(err, ErrClosed) || err != c.Err() {
			t.Errorf("call racing the crash = %v, want the crash %v", err, c.Err())
		}
	}
}
