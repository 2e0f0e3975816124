package kernel

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/generation"
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
