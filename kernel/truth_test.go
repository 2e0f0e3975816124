package kernel

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/observe"
)

// TestAbortedPluginsReportedAsConsequences: when a required plugin fails,
// the required plugins stopped with the batch (one mid-handshake, one not
// yet launched) are reported as not started because of it, after it.
func TestAbortedPluginsReportedAsConsequences(t *testing.T) {
	cfg := testConfig(writeHome(t,
		plug{name: "alpha", required: true, env: map[string]string{"SCRIPT_START": "hang"}, handshake: "1m"},
		plug{name: "beta", required: true, env: map[string]string{"SCRIPT_START": "exit"}},
		plug{name: "gamma", required: true},
	))
	cfg.PoolSize = 2
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(context.Background())
	err = k.Start(context.Background())
	var be *generation.BuildError
	if !errors.As(err, &be) {
		t.Fatalf("Start = %v, want a *generation.BuildError", err)
	}
	want := []string{
		`required plugin "beta" failed: plugin "beta": handshake: `,
		`required plugin "alpha" not started: required plugin "beta" failed`,
		`required plugin "gamma" not started: required plugin "beta" failed`,
	}
	if len(be.Problems) != len(want) {
		t.Fatalf("problems = %q, want %d", be.Problems, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(be.Problems[i], w) || i > 0 && be.Problems[i] != w {
			t.Errorf("problems[%d] = %q, want %q", i, be.Problems[i], w)
		}
	}
	if i := slices.IndexFunc(be.Problems, func(p string) bool { return strings.Contains(p, "no answer") }); i >= 0 {
		t.Errorf("an aborted plugin is reported as its own handshake failure: %q", be.Problems[i])
	}
	noChildren(t)
}

// TestProgressShowsPluginsRemovedAfterReady: a plugin reported ready and
// then removed (left out for its declarations, or failed along requires)
// gets a failed progress event saying why.
func TestProgressShowsPluginsRemovedAfterReady(t *testing.T) {
	cfg := testConfig(writeHome(t,
		plug{name: "store", provides: []string{"storage.kv@1.0.0"}, env: map[string]string{"SCRIPT_PROVIDERS": "Bad"}},
		plug{name: "user", requires: []string{"storage.kv ^1.0"}},
	))
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	states := map[string][]string{}
	reasons := map[string]string{}
	k.Subscribe(func(e observe.Event) {
		if e.Type != observe.EventPlugin {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		states[e.Plugin] = append(states[e.Plugin], e.State)
		if e.Err != nil {
			reasons[e.Plugin] = e.Err.Error()
		}
	})
	if err := k.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := k.Close(context.Background()); err != nil {
			t.Error(err)
		}
		noChildren(t)
	}()
	mu.Lock()
	defer mu.Unlock()
	want := map[string][]string{"store": {"starting", "ready", "failed"}, "user": {"starting", "ready", "failed"}}
	if !reflect.DeepEqual(states, want) {
		t.Errorf("progress = %v, want %v", states, want)
	}
	if r := reasons["store"]; !strings.HasPrefix(r, "left out of the generation: provider \"plugin/store/Bad\"") {
		t.Errorf("store's reason = %q", r)
	}
	if r := reasons["user"]; !strings.HasPrefix(r, `requires storage.kv ^1.0, provided by "store", which failed: left out`) {
		t.Errorf("user's reason = %q", r)
	}
}
