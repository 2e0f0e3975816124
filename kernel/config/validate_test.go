package config

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
)

// validConfig sets every field of a Config to a valid value other than its
// zero, at the edges of the ranges where a field has one.
func validConfig() Config {
	handler := func(context.Context, *capability.Call) (json.RawMessage, error) { return nil, nil }
	return Config{
		Home:             "home",
		Capabilities:     []capability.Provided{{Key: "host.log", Version: semver.MustParse("1.0.0")}},
		Handlers:         map[capability.Key]capability.Handler{"host.log": handler},
		CapabilityConfig: map[capability.Key]json.RawMessage{"host.log": json.RawMessage(`{"level": "info"}`)},
		MaxCallDepth:     1,
		StreamWindow:     -1,
		Points:           []contribution.Point{"tool.before"},
		Slots:            []contribution.Slot{"context.compactor"},
		Kinds: append(contribution.DefaultKinds(), contribution.KindSpec{Kind: "tool", Policy: contribution.Unique},
			contribution.KindSpec{Kind: "hook", Policy: contribution.Ordered, Target: contribution.TargetPoint}),
		PoolSize:      1,
		StartupBudget: time.Nanosecond,
		Policy:        map[string]FailurePolicy{"a": FailureRequired, "b": FailureOptional, "c": FailureDefault},
		SlotOwners:    map[contribution.Slot]string{"context.compactor": "memory"},
		Deadlines:     Deadlines{Intercept: time.Second, Strategy: time.Second, Provider: time.Second, Action: time.Second},
		DrainTimeout:  time.Second,
		Supervision: Supervision{HeartbeatInterval: time.Second, HeartbeatTimeout: time.Hour, HangTimeout: time.Second,
			CrashBudget: 1, CrashWindow: time.Second, BackoffMin: time.Minute, BackoffMax: time.Second},
		PluginEnv:        map[string]map[string]EnvVar{"memory": {"_A1": {Value: "x", Secret: true}}},
		Limits:           map[string]pluginpkg.ResourceLimits{"memory": {OpenFiles: 1}},
		PluginConfig:     map[string]json.RawMessage{"memory": json.RawMessage(`{"keep": 3}`)},
		HandshakeTimeout: 60 * time.Second,
		Session:          map[string]string{"workspace": "/src"},
		DataRoot:         "data",
		FirstGeneration:  7,
	}
}

// TestValidate holds every rule of Validate, each with a value it accepts
// and one it refuses: the whole list of problems, in the order of the
// file's keys, each named by its key path.
func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		want []string
	}{
		{name: "zero config", edit: func(c *Config) { *c = Config{} }},
		{name: "every field set", edit: func(*Config) {}},
		{name: "no kinds at all", edit: func(c *Config) { c.Kinds = []contribution.KindSpec{} }},
		{name: "a built-in kind left out", edit: func(c *Config) { c.Kinds = contribution.DefaultKinds()[1:] }},
		{name: "built-in kinds after added ones", edit: func(c *Config) {
			c.Kinds = append([]contribution.KindSpec{{Kind: "tool", Policy: contribution.Unique}}, contribution.DefaultKinds()...)
		}},
		{name: "handshake timeout above the maximum", edit: func(c *Config) { c.HandshakeTimeout = 61 * time.Second },
			want: []string{`handshake_timeout: "1m1s" exceeds the maximum of 1m0s`}},
		{name: "negative durations", edit: func(c *Config) {
			c.StartupBudget, c.DrainTimeout, c.HandshakeTimeout, c.MaxCallDuration = -time.Second, -time.Millisecond, -time.Minute, -time.Hour
			c.Deadlines = Deadlines{Intercept: -1, Strategy: -2, Provider: -3, Action: -4}
			c.Supervision = Supervision{HeartbeatInterval: -1, HeartbeatTimeout: -2, HangTimeout: -3, CrashWindow: -4, BackoffMin: -5, BackoffMax: -6}
		}, want: []string{
			`startup_budget: "-1s" is not a positive duration such as "5s"`,
			`deadlines.intercept: "-1ns" is not a positive duration such as "5s"`,
			`deadlines.strategy: "-2ns" is not a positive duration such as "5s"`,
			`deadlines.provider: "-3ns" is not a positive duration such as "5s"`,
			`deadlines.action: "-4ns" is not a positive duration such as "5s"`,
			`max_call_duration: "-1h" is not a positive duration such as "5s"`,
			`drain_timeout: "-1ms" is not a positive duration such as "5s"`,
			`supervision.heartbeat_interval: "-1ns" is not a positive duration such as "5s"`,
			`supervision.heartbeat_timeout: "-2ns" is not a positive duration such as "5s"`,
			`supervision.hang_timeout: "-3ns" is not a positive duration such as "5s"`,
			`supervision.crash_window: "-4ns" is not a positive duration such as "5s"`,
			`supervision.backoff_min: "-5ns" is not a positive duration such as "5s"`,
			`supervision.backoff_max: "-6ns" is not a positive duration such as "5s"`,
			`handshake_timeout: "-1m" is not a positive duration such as "5s"`,
		}},
		{name: "negative counts", edit: func(c *Config) { c.PoolSize, c.MaxCallDepth, c.Supervision.CrashBudget = -1, -2, -3 },
			want: []string{
				`pool_size: must be at least 1, got -1`,
				`supervision.crash_budget: must be a non-negative integer, got -3`,
				`max_call_depth: must be at least 1, got -2`,
			}},
		{name: "capabilities", edit: func(c *Config) {
			c.Capabilities = append(c.Capabilities, capability.Provided{Key: "Host.Fs", Version: semver.MustParse("1.0.0")},
				capability.Provided{Key: "host.db"})
			c.Handlers = nil
		}, want: []string{
			`capabilities[1].capability: "Host.Fs" is not a valid capability key: segment 1 ("Host") contains an upper-case letter (identifiers are lower-case)`,
			`capabilities[2].version: missing or not a valid semver version`,
		}},
		{name: "handlers", edit: func(c *Config) { c.Handlers["host.fs"] = c.Handlers["host.log"]; c.Handlers["host.log"] = nil },
			want: []string{
				`handlers.host.fs: the host does not provide "host.fs" (add it to capabilities)`,
				`handlers.host.log: the handler is nil`,
			}},
		{name: "capability config", edit: func(c *Config) {
			c.CapabilityConfig["host.fs.read"] = json.RawMessage(`{}`)
			c.CapabilityConfig["host.log"] = json.RawMessage(`{`)
		}, want: []string{
			`capability_config.host.fs.read: the host does not provide "host.fs.read" (add it to capabilities)`,
			`capability_config.host.log: is not valid JSON`,
		}},
		{name: "points and slots", edit: func(c *Config) {
			c.Points = append(c.Points, "a..b")
			c.Slots = []contribution.Slot{" ", "ok"}
		}, want: []string{
			`points[1]: "a..b" is not a valid point: segment 2 ("") is empty`,
			`slots[0]: " " is not a valid slot: segment 1 (" ") contains whitespace`,
		}},
		{name: "kinds", edit: func(c *Config) {
			c.Kinds = append(c.Kinds,
				contribution.KindSpec{Kind: "provider", Policy: contribution.Unique},             // kinds[2]: a second provider
				contribution.KindSpec{Kind: "Tool", Policy: 9, Target: 7},                        // kinds[3]
				contribution.KindSpec{Kind: "tool", Policy: contribution.Ordered},                // kinds[4]: tool again
				contribution.KindSpec{Kind: "theme"},                                             // kinds[5]: no policy
				contribution.KindSpec{Policy: contribution.Unique},                               // kinds[6]: no kind
				contribution.KindSpec{Kind: "strategy", Policy: contribution.Ordered, Target: 2}) // kinds[7]
		}, want: []string{
			`kinds[2].kind: "provider" is a built-in kind; it cannot be redeclared`,
			`kinds[3].kind: "Tool" is not a valid kind: segment 1 ("Tool") contains an upper-case letter (identifiers are lower-case)`,
			`kinds[3].policy: Policy(9) is not "ordered", "exclusive" or "unique"`,
			`kinds[3].target: Target(7) is not "none", "point" or "slot"`,
			`kinds[4].kind: "tool" is declared twice (also kinds[0])`,
			`kinds[5].policy: missing (one of "ordered", "exclusive", "unique")`,
			`kinds[6].kind: kind must not be empty`,
			`kinds[7].kind: "strategy" is a built-in kind; it cannot be redeclared`,
		}},
		{name: "a built-in kind with another spec", edit: func(c *Config) {
			c.Kinds = []contribution.KindSpec{{Kind: "interceptor", Policy: contribution.Unique, Target: contribution.TargetPoint}}
		}, want: []string{`kinds[0].kind: "interceptor" is a built-in kind; it cannot be redeclared`}},
		{name: "policy", edit: func(c *Config) { c.Policy["d"] = "sometimes"; c.Policy["e"] = "Required" },
			want: []string{`policy.d: "sometimes" is not "required" or "optional"`, `policy.e: "Required" is not "required" or "optional"`}},
		{name: "slot owners", edit: func(c *Config) { c.SlotOwners["Bad"] = "x"; c.SlotOwners["ok"] = "" },
			want: []string{
				`slot_owners.Bad: "Bad" is not a valid slot: segment 1 ("Bad") contains an upper-case letter (identifiers are lower-case)`,
				`slot_owners.ok: owner must name a package`,
			}},
		{name: "plugin config", edit: func(c *Config) {
			c.PluginConfig["a"] = json.RawMessage(`{"keep":`)
			c.PluginConfig["b"] = json.RawMessage{}
			c.PluginConfig["c"] = nil
		}, want: []string{`plugin_config.a: is not valid JSON`, `plugin_config.b: is not valid JSON`}},
		{name: "plugin env", edit: func(c *Config) {
			c.PluginEnv["Bad Name"] = map[string]EnvVar{"1X": {}}
			c.PluginEnv["memory"]["EXTKERNEL_HOME"] = EnvVar{}
			c.PluginEnv["memory"]["9LIVES"] = EnvVar{}
			c.PluginEnv["memory"]["A-B"] = EnvVar{}
			c.PluginEnv["memory"][""] = EnvVar{}
		}, want: []string{
			`plugin_env.Bad Name: "Bad Name" is not a valid package name (use 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit)`,
			`plugin_env.memory.: "" is not a usable environment variable name (letters, digits, '_'; not EXTKERNEL_*)`,
			`plugin_env.memory.9LIVES: "9LIVES" is not a usable environment variable name (letters, digits, '_'; not EXTKERNEL_*)`,
			`plugin_env.memory.A-B: "A-B" is not a usable environment variable name (letters, digits, '_'; not EXTKERNEL_*)`,
			`plugin_env.memory.EXTKERNEL_HOME: "EXTKERNEL_HOME" is not a usable environment variable name (letters, digits, '_'; not EXTKERNEL_*)`,
		}},
		{name: "every problem at once, in the order of the file's keys", edit: func(c *Config) {
			c.MaxCallDepth, c.HandshakeTimeout, c.PoolSize = -1, time.Hour, -1
			c.Policy["d"] = "never"
			c.Points = []contribution.Point{"X"}
			c.Handlers["host.fs"] = nil
		}, want: []string{
			`handlers.host.fs: the handler is nil`,
			`points[0]: "X" is not a valid point: segment 1 ("X") contains an upper-case letter (identifiers are lower-case)`,
			`pool_size: must be at least 1, got -1`,
			`policy.d: "never" is not "required" or "optional"`,
			`handshake_timeout: "1h" exceeds the maximum of 1m0s`,
			`max_call_depth: must be at least 1, got -1`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.edit(&c)
			err := c.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Validate = %v (%T), want a *Error", err, err)
			}
			if ce.Path != "" || !reflect.DeepEqual(ce.Problems, tt.want) {
				t.Errorf("Validate: path %q, problems\n%q\nwant\n%q", ce.Path, ce.Problems, tt.want)
			}
		})
	}
}

// TestValidateIsParsesCheck holds Parse and Validate to one set of rules
// in one set of words: a value a file holds is refused with the problem
// Validate reports for the same value set in Go.
func TestValidateIsParsesCheck(t *testing.T) {
	tests := []struct {
		name, file string
		edit       func(*Config)
	}{
		{"pool size", `"pool_size": -1`, func(c *Config) { c.PoolSize = -1 }},
		{"call depth", `"max_call_depth": -2`, func(c *Config) { c.MaxCallDepth = -2 }},
		{"crash budget", `"supervision": {"crash_budget": -1}`, func(c *Config) { c.Supervision.CrashBudget = -1 }},
		{"handshake timeout", `"handshake_timeout": "90s"`, func(c *Config) { c.HandshakeTimeout = 90 * time.Second }},
		{"max call duration", `"max_call_duration": "-1h"`, func(c *Config) { c.MaxCallDuration = -time.Hour }},
		{"capability key", `"capabilities": [{"capability": "a..b", "version": "1.0.0"}]`,
			func(c *Config) {
				c.Capabilities = []capability.Provided{{Key: "a..b", Version: semver.MustParse("1.0.0")}}
			}},
		{"point", `"points": ["A"]`, func(c *Config) { c.Points = []contribution.Point{"A"} }},
		{"slot", `"slots": ["s", ""]`, func(c *Config) { c.Slots = []contribution.Slot{"s", ""} }},
		{"kinds", `"kinds": [{"kind": "tool", "policy": "unique"}, {"kind": "tool", "policy": "ordered"}, {"kind": "action", "policy": "unique"}, {"kind": "x"}]`,
			func(c *Config) {
				c.Kinds = append(contribution.DefaultKinds(), contribution.KindSpec{Kind: "tool", Policy: contribution.Unique},
					contribution.KindSpec{Kind: "tool", Policy: contribution.Ordered},
					contribution.KindSpec{Kind: "action", Policy: contribution.Unique}, contribution.KindSpec{Kind: "x"})
			}},
		{"policy", `"policy": {"a": "always"}`, func(c *Config) { c.Policy = map[string]FailurePolicy{"a": "always"} }},
		{"slot owner", `"slot_owners": {"s": ""}`, func(c *Config) { c.SlotOwners = map[contribution.Slot]string{"s": ""} }},
		{"plugin env", `"plugin_env": {"p": {"EXTKERNEL_X": "1"}, "P": {}}`, func(c *Config) {
			c.PluginEnv = map[string]map[string]EnvVar{"p": {"EXTKERNEL_X": {Value: "1"}}, "P": {}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("k.json", []byte(`{"format": 1, `+tt.file+`}`))
			var fromFile *Error
			if !errors.As(err, &fromFile) {
				t.Fatalf("Parse = %v, want a *Error", err)
			}
			var c Config
			tt.edit(&c)
			var fromGo *Error
			if !errors.As(c.Validate(), &fromGo) {
				t.Fatalf("Validate = %v, want a *Error", c.Validate())
			}
			if !reflect.DeepEqual(fromGo.Problems, fromFile.Problems) {
				t.Errorf("Validate's problems\n%q\nParse's\n%q", fromGo.Problems, fromFile.Problems)
			}
		})
	}
}

// TestParseZeroMeansDefault: a file's empty policy is the zero
// FailurePolicy, the manifest's choice, as in Go.
func TestParseZeroMeansDefault(t *testing.T) {
	cfg, err := Parse("k.json", []byte(`{"format": 1, "policy": {"a": "", "b": "optional"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]FailurePolicy{"a": FailureDefault, "b": FailureOptional}; !reflect.DeepEqual(cfg.Policy, want) {
		t.Errorf("Policy = %v, want %v", cfg.Policy, want)
	}
}
