package kernel

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/kernel/config"
)

// pidOfPlugin returns plugin's PID in k's current generation.
func pidOfPlugin(t *testing.T, k *Kernel, plugin string) int {
	t.Helper()
	for _, p := range k.Plugins() {
		if p.Name == plugin {
			return p.PID
		}
	}
	t.Fatalf("no plugin %q", plugin)
	return 0
}

// TestReconfigure: a new config is applied by a reload under it (the
// plugin whose config changed is restarted, the other adopted, dispatch
// follows the new strictness); a config that may not change the home is
// refused; one whose reload fails rolls back to the old config.
func TestReconfigure(t *testing.T) {
	cfg := testConfig(writeHome(t,
		plug{name: "a", intercepts: []string{"tool.before"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=continue"}},
		plug{name: "b", intercepts: []string{"tool.before"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=continue"}},
	))
	k := startKernel(t, cfg)
	ctx := context.Background()
	pidA, pidB := pidOfPlugin(t, k, "a"), pidOfPlugin(t, k, "b")

	next := cfg
	next.PluginConfig = map[string]json.RawMessage{"a": json.RawMessage(`{"mode":"strict"}`)}
	next.Strict = true
	res, err := k.Reconfigure(ctx, next)
	if err != nil || !res.Published {
		t.Fatalf("Reconfigure = %v, %v; want a published generation", res, err)
	}
	if got := pidOfPlugin(t, k, "a"); got == pidA {
		t.Errorf("plugin a kept pid %d after its config changed", got)
	}
	if got := pidOfPlugin(t, k, "b"); got != pidB {
		t.Errorf("plugin b: pid %d, want %d (adopted)", got, pidB)
	}
	if _, err := k.Intercept(ctx, "prompt.submit", nil); err == nil {
		t.Error("Intercept at an undeclared point succeeded: the new config's strict mode is not in effect")
	}

	moved := next
	moved.Home = t.TempDir()
	if _, err := k.Reconfigure(ctx, moved); err == nil || !strings.Contains(err.Error(), "is not the kernel's") {
		t.Errorf("Reconfigure with another home = %v, want refused", err)
	}

	// b required, and given an environment that makes it exit before its
	// handshake: the reload fails and rolls back.
	broken := next
	broken.Policy = map[string]config.FailurePolicy{"b": config.FailureRequired}
	broken.PluginEnv = map[string]map[string]config.EnvVar{"b": {"SCRIPT_START": {Value: "exit"}}}
	before := k.Current().Number()
	if _, err := k.Reconfigure(ctx, broken); err == nil {
		t.Fatal("Reconfigure making a required plugin fail succeeded")
	}
	if got := pidOfPlugin(t, k, "b"); got != pidB {
		t.Errorf("plugin b: pid %d after the rollback, want %d", got, pidB)
	}
	if k.Current().Number() != before || k.config().Policy["b"] != config.FailureDefault || !k.config().Strict {
		t.Errorf("after a failed Reconfigure: generation %d (want %d), policy %v, strict %v; want the previous config",
			k.Current().Number(), before, k.config().Policy, k.config().Strict)
	}
}
