package kernel

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/kernel/config"
)

// FuzzParseConfig feeds arbitrary bytes to the config parser: it must never
// panic, and must return either a config or a *config.Error whose every
// problem is prefixed with the file name.
func FuzzParseConfig(f *testing.F) {
	for _, p := range []string{"../testdata/demo/kernel.json", "../testdata/homes/trouble/kernel.json"} {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"format": 1, "supervision": {"crash_budget": -1, "hang_timeout": 5}}`))
	f.Add([]byte(`{"format": 1, "capabilities": [{"capability": "a.b", "version": "1.0.0", "x": 1}], "deadlines": {"intercept": "1ms"}}`))
	f.Add([]byte(`{"format": 1, "policy": {"a": "required"}, "slot_owners": {"s": "a"}, "plugin_config": {"a": [1, {}]}}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse(filepath.Join("dir", "k.json"), data)
		if err != nil {
			var ce *config.Error
			if !errors.As(err, &ce) || len(ce.Problems) == 0 {
				t.Fatalf("error %v (%T) is not a *config.Error with problems", err, err)
			}
			return
		}
		// A config that parsed passes Validate, and gets valid defaults.
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse returned a config that Validate refuses: %v", err)
		}
		d := withDefaults(cfg)
		if d.PoolSize < 1 || d.StartupBudget <= 0 || d.Deadlines.Intercept <= 0 {
			t.Fatalf("defaults not applied: %+v", d)
		}
	})
}

// TestDefaultsOfDemoConfig applies the defaults to the demo's config: the
// fields it leaves out take their documented defaults, the ones it sets
// are kept.
func TestDefaultsOfDemoConfig(t *testing.T) {
	cfg, err := config.Load(filepath.Join("..", "testdata", "demo", "kernel.json"))
	if err != nil {
		t.Fatal(err)
	}
	d := withDefaults(cfg)
	if d.Deadlines.Strategy != defaultCallDeadline || d.DrainTimeout != defaultDrainTimeout || d.PoolSize != 4 {
		t.Errorf("withDefaults = %+v", d)
	}
	if d.Deadlines.Intercept != 5*time.Second || d.StartupBudget != 30*time.Second {
		t.Errorf("durations = %v, %v, want the file's", d.Deadlines.Intercept, d.StartupBudget)
	}
}

// TestNewRefusesAsParse: a Config built in Go with a bad value fails New
// and Reconfigure with the problem Parse reports for that value in a file
// (one check, config.Config.Validate), as a *config.Error after "kernel:
// config: ".
func TestNewRefusesAsParse(t *testing.T) {
	tests := []struct {
		name, file string
		edit       func(*config.Config)
	}{
		{"pool size", `"pool_size": -3`, func(c *config.Config) { c.PoolSize = -3 }},
		{"call depth", `"max_call_depth": -1`, func(c *config.Config) { c.MaxCallDepth = -1 }},
		{"handshake timeout", `"handshake_timeout": "2m"`, func(c *config.Config) { c.HandshakeTimeout = 2 * time.Minute }},
		{"crash budget", `"supervision": {"crash_budget": -1}`, func(c *config.Config) { c.Supervision.CrashBudget = -1 }},
		{"capability", `"capabilities": [{"capability": "Host.Log", "version": "1.0.0"}]`, func(c *config.Config) {
			c.Capabilities = []capability.Provided{{Key: "Host.Log", Version: semver.MustParse("1.0.0")}}
		}},
		{"kind", `"kinds": [{"kind": "provider", "policy": "unique"}]`, func(c *config.Config) {
			c.Kinds = append(contribution.DefaultKinds(), contribution.KindSpec{Kind: "provider", Policy: contribution.Unique})
		}},
		{"several", `"policy": {"a": "maybe"}, "slot_owners": {"s": ""}, "plugin_env": {"p": {"EXTKERNEL_DATA_DIR": "x"}}`,
			func(c *config.Config) {
				c.Policy = map[string]config.FailurePolicy{"a": "maybe"}
				c.SlotOwners = map[contribution.Slot]string{"s": ""}
				c.PluginEnv = map[string]map[string]config.EnvVar{"p": {"EXTKERNEL_DATA_DIR": {Value: "x"}}}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse("k.json", []byte(`{"format": 1, `+tt.file+`}`))
			var fromFile *config.Error
			if !errors.As(err, &fromFile) {
				t.Fatalf("Parse = %v, want a *config.Error", err)
			}
			want := "kernel: config: " + strings.Join(fromFile.Problems, "\n")
			cfg := testConfig(t.TempDir())
			tt.edit(&cfg)
			_, err = New(cfg)
			var fromGo *config.Error
			if !errors.As(err, &fromGo) || !reflect.DeepEqual(fromGo.Problems, fromFile.Problems) || err.Error() != want {
				t.Errorf("New = %v\nwant %s", err, want)
			}
			k, err := New(testConfig(cfg.Home))
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close(context.Background())
			if _, err := k.Reconfigure(context.Background(), cfg); err == nil || err.Error() != want {
				t.Errorf("Reconfigure = %v\nwant %s", err, want)
			}
		})
	}
}
