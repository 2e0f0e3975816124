package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/extkernel/extkernel/contribution"
)

// TestStrictDispatch dispatches to declared and undeclared points and
// slots: in strict mode an undeclared one is an error wrapping
// ErrUnknownTarget; otherwise nothing runs there (the payload comes back
// unchanged, the host default applies), even when a plugin names it, since
// a contribution to an undeclared target is left out of the registry.
func TestStrictDispatch(t *testing.T) {
	alpha := plug{name: "alpha", intercepts: []string{"tool.before"}, replaces: []string{"context.compactor"},
		env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=modify", "SCRIPT_SLOTS": "context.compactor"}}
	// beta contributes to a point and a slot the host does not declare:
	// left out with a warning in lax mode (an error in strict mode, so
	// only the lax kernel has it).
	beta := plug{name: "beta", intercepts: []string{"tool.extra"}, replaces: []string{"memory.store"},
		env: map[string]string{"SCRIPT_INTERCEPT": "tool.extra=modify", "SCRIPT_SLOTS": "memory.store"}}
	tests := []struct {
		name      string
		strict    bool
		point     contribution.Point // Intercept when set, else Strategy
		slot      contribution.Slot
		wantErr   string
		wantChain string // Intercept: steps; Strategy: owner, or "host default"
	}{
		{name: "strict declared point", strict: true, point: "tool.before", wantChain: "alpha:modify"},
		{name: "strict misspelt point", strict: true, point: "tool.befor",
			wantErr: `no such contribution: point "tool.befor" is not one the host declares (strict mode)`},
		{name: "strict declared slot", strict: true, slot: "context.compactor", wantChain: "alpha"},
		{name: "strict misspelt slot", strict: true, slot: "context.compacter",
			wantErr: `no such contribution: slot "context.compacter" is not one the host declares (strict mode)`},
		{name: "lax declared point", point: "tool.before", wantChain: "alpha:modify"},
		{name: "lax misspelt point runs nothing", point: "tool.befor", wantChain: ""},
		{name: "lax point only a plugin names runs nothing", point: "tool.extra", wantChain: ""},
		{name: "lax misspelt slot is the host default", slot: "context.compacter", wantChain: "host default"},
		{name: "lax slot only a plugin claims is the host default", slot: "memory.store", wantChain: "host default"},
	}
	for _, strict := range []bool{true, false} {
		plugs := []plug{alpha, beta}
		if strict {
			plugs = plugs[:1]
		}
		cfg := testConfig(writeHome(t, plugs...))
		cfg.Strict = strict
		t.Run(fmt.Sprintf("strict=%v", strict), func(t *testing.T) {
			k := startKernel(t, cfg)
			for _, tt := range tests {
				if tt.strict == strict {
					t.Run(tt.name, func(t *testing.T) { checkDispatch(t, k, tt.point, tt.slot, tt.wantErr, tt.wantChain) })
				}
			}
		})
	}
}

// checkDispatch calls Intercept at point, or Strategy on slot when point is
// empty, and checks the error or the outcome (the chain, or the owner or
// "host default").
func checkDispatch(t *testing.T, k *Kernel, point contribution.Point, slot contribution.Slot, wantErr, want string) {
	t.Helper()
	var got string
	var err error
	if point != "" {
		var res *InterceptResult
		if res, err = k.Intercept(context.Background(), point, json.RawMessage(`[]`)); err == nil {
			got = chainOf(res)
		}
	} else {
		var res *StrategyResult
		if res, err = k.Strategy(context.Background(), slot, json.RawMessage(`{}`)); err == nil {
			got = res.Owner
			if res.HostDefault {
				got = "host default"
			}
		}
	}
	if wantErr != "" {
		if !errors.Is(err, ErrUnknownTarget) || err.Error() != wantErr {
			t.Errorf("err = %v, want %q wrapping ErrUnknownTarget", err, wantErr)
		}
		return
	}
	if err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}
