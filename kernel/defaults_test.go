package kernel

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

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
		// A config that parsed gets valid defaults.
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
