package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/sidecar"
)

func startKernel(t *testing.T, cfg config.Config) *Kernel {
	t.Helper()
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := k.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := k.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		noChildren(t)
	})
	return k
}

func chainOf(res *InterceptResult) string {
	var parts []string
	for _, s := range res.Steps {
		parts = append(parts, s.Plugin+":"+s.Decision)
	}
	return strings.Join(parts, " ")
}

func TestInterceptChain(t *testing.T) {
	modify := func(name string, prio int) plug {
		return plug{name: name, priority: prio, intercepts: []string{"tool.before"},
			env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=modify"}}
	}
	tests := []struct {
		name        string
		plugs       []plug
		wantPayload string
		wantChain   string
		wantDenied  string
		wantErr     string
	}{
		{
			name:        "priority then name",
			plugs:       []plug{modify("bravo", 10), modify("alpha", 10), modify("charlie", 50), modify("delta", -5)},
			wantPayload: `["charlie","alpha","bravo","delta"]`,
			wantChain:   "charlie:modify alpha:modify bravo:modify delta:modify",
		},
		{
			name: "handshake priority overrides manifest",
			plugs: []plug{modify("alpha", 10), {name: "zulu", priority: 0, intercepts: []string{"tool.before"},
				env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=modify@900"}}},
			wantPayload: `["zulu","alpha"]`,
			wantChain:   "zulu:modify alpha:modify",
		},
		{
			name: "deny short-circuits",
			plugs: []plug{modify("alpha", 10), modify("charlie", -10), {name: "bravo", intercepts: []string{"tool.before"},
				env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=deny"}}},
			wantPayload: `["alpha"]`,
			wantChain:   "alpha:modify bravo:deny",
			wantDenied:  "bravo says no",
		},
		{
			name: "optional failure is skipped",
			plugs: []plug{modify("alpha", 10), modify("charlie", -10), {name: "bravo", intercepts: []string{"tool.before"},
				env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=fail"}}},
			wantPayload: `["alpha","charlie"]`,
			wantChain:   "alpha:modify bravo:skipped charlie:modify",
		},
		{
			name: "required failure fails closed",
			plugs: []plug{modify("alpha", 10), modify("charlie", -10), {name: "bravo", required: true, intercepts: []string{"tool.before"},
				env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=fail"}}},
			wantErr: `plugin "bravo": interceptor "tool.before": plugin "bravo": intercept: bravo failed on purpose (code -32000)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := startKernel(t, testConfig(writeHome(t, tt.plugs...)))
			res, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
			if tt.wantErr != "" {
				var pe *PluginError
				if !errors.As(err, &pe) || !pe.Required || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want required *PluginError %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Payload) != tt.wantPayload || chainOf(res) != tt.wantChain || res.Reason != tt.wantDenied {
				t.Errorf("payload %s chain %q denied %q; want %s %q %q", res.Payload, chainOf(res), res.Reason,
					tt.wantPayload, tt.wantChain, tt.wantDenied)
			}
		})
	}
}

func TestInterceptTimeoutOptionalAndRequired(t *testing.T) {
	for _, required := range []bool{false, true} {
		t.Run(map[bool]string{false: "optional", true: "required"}[required], func(t *testing.T) {
			cfg := testConfig(writeHome(t, plug{name: "slow", required: required, intercepts: []string{"tool.before"},
				env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=hang"}}))
			cfg.Deadlines.Intercept = 100 * time.Millisecond
			k := startKernel(t, cfg)
			res, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
			if required {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("err = %v, want deadline exceeded", err)
				}
				return
			}
			if err != nil || chainOf(res) != "slow:skipped" || !errors.Is(res.Steps[0].Err, context.DeadlineExceeded) {
				t.Fatalf("res %+v err %v, want the slow step skipped on its deadline", res, err)
			}
		})
	}
}

func TestCrashedPluginIsSkippedOrFailsClosed(t *testing.T) {
	for _, required := range []bool{false, true} {
		t.Run(map[bool]string{false: "optional", true: "required"}[required], func(t *testing.T) {
			cfg := testConfig(writeHome(t,
				plug{name: "crashy", required: required, priority: 5, intercepts: []string{"tool.before"},
					env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=crash"}},
				plug{name: "steady", intercepts: []string{"tool.before"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=modify"}}))
			cfg.Supervision.BackoffMin = time.Hour // no restart during the test
			k := startKernel(t, cfg)
			crashed := make(chan observe.Event, 1)
			unsub := k.Subscribe(func(e observe.Event) {
				if e.Type == observe.EventPluginCrashed {
					crashed <- e
				}
			})
			defer unsub()
			_, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
			var ce *sidecar.CrashError
			if required && !errors.As(err, &ce) {
				t.Fatalf("first call: err = %v, want a *sidecar.CrashError", err)
			}
			select {
			case e := <-crashed:
				if e.Plugin != "crashy" {
					t.Errorf("crash event for %q", e.Plugin)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no crash event")
			}
			res, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
			if required {
				if !errors.Is(err, ErrPluginDown) {
					t.Fatalf("after the crash: err = %v, want ErrPluginDown", err)
				}
				return
			}
			if err != nil || chainOf(res) != "crashy:skipped steady:modify" || !errors.Is(res.Steps[0].Err, ErrPluginDown) {
				t.Fatalf("after the crash: %+v, %v", res, err)
			}
		})
	}
}

func TestStrategySlots(t *testing.T) {
	claim := func(name string) plug {
		return plug{name: name, replaces: []string{"context.compactor"}, env: map[string]string{"SCRIPT_SLOTS": "context.compactor"}}
	}
	t.Run("unclaimed slot uses host default", func(t *testing.T) {
		k := startKernel(t, testConfig(writeHome(t, plug{name: "idle"})))
		res, err := k.Strategy(context.Background(), "context.compactor", json.RawMessage(`1`))
		if err != nil || !res.HostDefault || res.Owner != "" {
			t.Fatalf("res %+v err %v", res, err)
		}
	})
	t.Run("single claimant owns the slot", func(t *testing.T) {
		k := startKernel(t, testConfig(writeHome(t, claim("memory"))))
		res, err := k.Strategy(context.Background(), "context.compactor", json.RawMessage(`[1,2]`))
		if err != nil || res.HostDefault || res.Owner != "memory" || string(res.Output) != `{"input":[1,2],"owner":"memory"}` {
			t.Fatalf("res %+v (%s) err %v", res, res.Output, err)
		}
	})
	t.Run("two required claims fail the build naming both", func(t *testing.T) {
		memory, summarizer := claim("memory"), claim("summarizer")
		memory.required, summarizer.required = true, true
		k, err := New(testConfig(writeHome(t, memory, summarizer)))
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close(context.Background())
		err = k.Start(context.Background())
		var be *generation.BuildError
		var cbe *contribution.RegistryError
		if !errors.As(err, &be) || !errors.As(err, &cbe) {
			t.Fatalf("err = %v, want *generation.BuildError wrapping *contribution.RegistryError", err)
		}
		if !strings.Contains(err.Error(), `"memory"`) || !strings.Contains(err.Error(), `"summarizer"`) {
			t.Errorf("err does not name both claimants: %v", err)
		}
		if k.Current() != nil {
			t.Error("a failed Start published a generation")
		}
		noChildren(t)
	})
	t.Run("config names the owner", func(t *testing.T) {
		cfg := testConfig(writeHome(t, claim("memory"), claim("summarizer")))
		cfg.SlotOwners = map[contribution.Slot]string{"context.compactor": "summarizer"}
		k := startKernel(t, cfg)
		res, err := k.Strategy(context.Background(), "context.compactor", nil)
		if err != nil || res.Owner != "summarizer" {
			t.Fatalf("res %+v err %v", res, err)
		}
		if ov := k.Current().Registry().Overridden(); len(ov) != 1 || ov[0].Source.Plugin != "memory" {
			t.Errorf("Overridden = %+v, want memory's claim", ov)
		}
	})
}

func TestUnknownPointStrictAndLenient(t *testing.T) {
	p := plug{name: "wanderer", intercepts: []string{"tool.sideways"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.sideways=continue"}}
	t.Run("lenient warns", func(t *testing.T) {
		k := startKernel(t, testConfig(writeHome(t, p)))
		if ws := strings.Join(k.Current().Warnings(), "\n"); !strings.Contains(ws, "tool.sideways") {
			t.Errorf("warnings = %q, want one about tool.sideways", ws)
		}
	})
	t.Run("strict leaves an optional plugin out", func(t *testing.T) {
		cfg := testConfig(writeHome(t, p))
		cfg.Strict = true
		k := startKernel(t, cfg)
		if m := k.Current().Member("wanderer"); m.Status != generation.StatusFailed || !strings.Contains(m.Reason, "tool.sideways") {
			t.Errorf("wanderer = %s %q, want left out for tool.sideways", m.Status, m.Reason)
		}
	})
	t.Run("strict fails for a required plugin", func(t *testing.T) {
		p := p
		p.required = true
		cfg := testConfig(writeHome(t, p))
		cfg.Strict = true
		k, _ := New(cfg)
		defer k.Close(context.Background())
		err := k.Start(context.Background())
		var cbe *contribution.RegistryError
		if !errors.As(err, &cbe) || !strings.Contains(err.Error(), "tool.sideways") {
			t.Fatalf("err = %v", err)
		}
		noChildren(t)
	})
}

func TestProvidersAndActions(t *testing.T) {
	k := startKernel(t, testConfig(writeHome(t,
		plug{name: "kv", env: map[string]string{"SCRIPT_PROVIDERS": "get", "SCRIPT_ACTIONS": "kv.show"}})))
	out, err := k.CallProvider(context.Background(), "plugin/kv/get", json.RawMessage(`"k"`))
	if err != nil || string(out) != `"k"` {
		t.Fatalf("provider: %s, %v", out, err)
	}
	out, err = k.RunAction(context.Background(), "plugin/kv/kv.show", nil)
	if err != nil || string(out) != `{"ran":"kv.show"}` {
		t.Fatalf("action: %s, %v", out, err)
	}
	if _, err := k.CallProvider(context.Background(), "plugin/kv/nope", nil); !errors.Is(err, ErrUnknownTarget) {
		t.Errorf("unknown provider: %v", err)
	}
	if _, err := k.RunAction(context.Background(), "nope", nil); !errors.Is(err, ErrUnknownTarget) {
		t.Errorf("unknown action: %v", err)
	}
}

// TestSameActionIDInTwoPlugins: action IDs are namespaced by plugin, so two
// plugins declaring the same one do not conflict; each runs its own.
func TestSameActionIDInTwoPlugins(t *testing.T) {
	k := startKernel(t, testConfig(writeHome(t, plug{name: "one", env: map[string]string{"SCRIPT_ACTIONS": "same.action"}},
		plug{name: "two", env: map[string]string{"SCRIPT_ACTIONS": "same.action"}})))
	if ws := k.Current().Warnings(); len(ws) != 0 {
		t.Errorf("warnings = %q, want none", ws)
	}
	var ids []string
	for _, c := range k.Current().Registry().Actions() {
		ids = append(ids, c.Key)
	}
	if want := []string{"plugin/one/same.action", "plugin/two/same.action"}; !slices.Equal(ids, want) {
		t.Errorf("actions = %q, want %q", ids, want)
	}
	for _, id := range ids {
		out, err := k.RunAction(context.Background(), id, nil)
		if err != nil || string(out) != `{"ran":"same.action"}` {
			t.Errorf("RunAction(%q) = %s, %v", id, out, err)
		}
	}
	if _, err := k.RunAction(context.Background(), "same.action", nil); !errors.Is(err, ErrUnknownTarget) {
		t.Errorf("RunAction of the local ID = %v, want ErrUnknownTarget", err)
	}
}

func TestCascadeAlongRequires(t *testing.T) {
	store := plug{name: "store", provides: []string{"storage.kv@1.0.0"}, env: map[string]string{"SCRIPT_START": "exit"}}
	user := plug{name: "user", requires: []string{"storage.kv ^1.0"}}
	bystander := plug{name: "bystander", requires: []string{"storage.kv ^1.0?"}}
	t.Run("optional dependents fail with the chain", func(t *testing.T) {
		k := startKernel(t, testConfig(writeHome(t, store, user, bystander)))
		g := k.Current()
		if m := g.Member("user"); m.Status != generation.StatusFailed ||
			!strings.HasPrefix(m.Reason, `requires storage.kv ^1.0, provided by "store", which failed: `) {
			t.Errorf("user: %s %q", m.Status, m.Reason)
		}
		if m := g.Member("bystander"); m.Status != generation.StatusRunning {
			t.Errorf("bystander (optional requirement) = %s %q, want running", m.Status, m.Reason)
		}
	})
	t.Run("a required dependent fails the generation", func(t *testing.T) {
		req := user
		req.required = true
		k, _ := New(testConfig(writeHome(t, store, req, bystander)))
		defer k.Close(context.Background())
		err := k.Start(context.Background())
		if err == nil || !strings.Contains(err.Error(), `required plugin "user" failed: requires storage.kv ^1.0, provided by "store", which failed`) {
			t.Fatalf("err = %v", err)
		}
		noChildren(t)
	})
	t.Run("policy override makes a plugin required", func(t *testing.T) {
		cfg := testConfig(writeHome(t, store, user))
		cfg.Policy = map[string]config.FailurePolicy{"store": config.FailureRequired}
		k, _ := New(cfg)
		defer k.Close(context.Background())
		err := k.Start(context.Background())
		var be *generation.BuildError
		var se *sidecar.StartError
		if !errors.As(err, &be) || !errors.As(err, &se) || se.Plugin != "store" ||
			!strings.Contains(err.Error(), `required plugin "store" failed: plugin "store": `) {
			t.Fatalf("err = %v, want a *generation.BuildError wrapping store's *sidecar.StartError", err)
		}
		noChildren(t)
	})
}

func TestLifecycleErrors(t *testing.T) {
	if _, err := New(config.Config{}); err == nil {
		t.Error("New without home succeeded")
	}
	k, _ := New(testConfig(writeHome(t, plug{name: "idle"})))
	if _, err := k.Intercept(context.Background(), "tool.before", nil); !errors.Is(err, ErrNotStarted) {
		t.Errorf("before Start: %v", err)
	}
	if err := k.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := k.Start(context.Background()); !errors.Is(err, ErrAlreadyStarted) {
		t.Errorf("second Start: %v", err)
	}
	if err := k.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := k.Intercept(context.Background(), "tool.before", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
	noChildren(t)
}

func TestConfigKindsRestrictAcceptedKinds(t *testing.T) {
	cfg := testConfig(writeHome(t, plug{name: "kv", env: map[string]string{"SCRIPT_PROVIDERS": "get", "SCRIPT_ACTIONS": "kv.show"}}))
	for _, k := range contribution.DefaultKinds() {
		if k.Kind != contribution.KindAction {
			cfg.Kinds = append(cfg.Kinds, k)
		}
	}
	k := startKernel(t, cfg)
	if _, err := k.RunAction(context.Background(), "plugin/kv/kv.show", nil); !errors.Is(err, ErrUnknownTarget) {
		t.Errorf("action of a kind the host does not accept: %v", err)
	}
	if ws := strings.Join(k.Current().Warnings(), "\n"); !strings.Contains(ws, "kv.show") {
		t.Errorf("warnings = %q, want one about the refused action", ws)
	}
	if _, err := k.CallProvider(context.Background(), "plugin/kv/get", json.RawMessage(`1`)); err != nil {
		t.Errorf("provider: %v", err)
	}
}
