package config

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/extkernel/extkernel/contribution"
)

func TestLoadDemo(t *testing.T) {
	cfg, err := Load(filepath.Join("..", "..", "testdata", "demo", "kernel.json"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.Abs(filepath.Join("..", "..", "testdata", "demo", "home"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Home != want {
		t.Errorf("Home = %q, want %q (absolute)", cfg.Home, want)
	}
	if len(cfg.Capabilities) != 1 || cfg.Capabilities[0].Key != "host.log" || cfg.Capabilities[0].Version.String() != "1.0.0" {
		t.Errorf("Capabilities = %v", cfg.Capabilities)
	}
	if cfg.Policy["audit"] != FailureOptional {
		t.Errorf("Policy = %v", cfg.Policy)
	}
	if cfg.Deadlines.Intercept != 5*time.Second || cfg.StartupBudget != 30*time.Second {
		t.Errorf("durations = %v, %v", cfg.Deadlines.Intercept, cfg.StartupBudget)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"syntax", "{\n  \"format\": 1,\n  \"home\" \"x\"\n}", `k.json: invalid JSON at line 3, column 10: invalid character '"' after object key`},
		{"wrong type", `{"format": 1, "pool_size": "four"}`, `k.json: pool_size: must be an integer, got string (line 1, column 28)`},
		{"missing format", `{}`, `k.json: format: missing (this build reads format 1)`},
		{"newer format", `{"format": 2}`, `k.json: format: 2 is not supported (this build reads format 1)`},
		{"unknown keys", `{"format": 1, "pool": 3, "host": {"nmae": "x"}, "capabilities": [{"capability": "a", "version": "1.0.0", "optional": true}]}`,
			"k.json: capabilities[0].optional: unknown key\nk.json: host.nmae: unknown key\nk.json: pool: unknown key"},
		{"call depth", `{"format": 1, "max_call_depth": -2}`, `k.json: max_call_depth: must be at least 1, got -2`},
		{"every value problem", `{"format": 1, "capabilities": [{"capability": "Host.Log", "version": "1"}], "points": ["a..b"], "slots": [" "], "pool_size": -1, "startup_budget": "soon", "policy": {"a": "sometimes"}, "slot_owners": {"s": ""}, "deadlines": {"intercept": "-1s"}}`,
			"k.json: startup_budget: \"soon\" is not a positive duration such as \"5s\"\n" +
				"k.json: deadlines.intercept: \"-1s\" is not a positive duration such as \"5s\"\n" +
				"k.json: capabilities[0].capability: \"Host.Log\" is not a valid capability key: segment 1 (\"Host\") contains an upper-case letter (identifiers are lower-case)\n" +
				"k.json: capabilities[0].version: \"1\" is not a valid semver version\n" +
				"k.json: points[0]: \"a..b\" is not a valid point: segment 2 (\"\") is empty\n" +
				"k.json: slots[0]: \" \" is not a valid slot: segment 1 (\" \") contains whitespace\n" +
				"k.json: pool_size: must be at least 1, got -1\n" +
				"k.json: policy.a: \"sometimes\" is not \"required\" or \"optional\"\n" +
				"k.json: slot_owners.s: owner must name a package"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("k.json", []byte(tt.in))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if err.Error() != tt.want {
				t.Errorf("err =\n%s\nwant\n%s", err, tt.want)
			}
		})
	}
}

func TestParseSlotOwners(t *testing.T) {
	cfg, err := Parse("/etc/k.json", []byte(`{"format": 1, "home": "h", "slot_owners": {"context.compactor": "memory"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SlotOwners[contribution.Slot("context.compactor")] != "memory" || cfg.Home != "/etc/h" {
		t.Errorf("cfg = %+v", cfg)
	}
}
