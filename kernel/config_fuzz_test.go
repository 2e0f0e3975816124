package kernel

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseConfig feeds arbitrary bytes to the config parser: it must never
// panic, and must return either a config or a *ConfigError whose every
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
		cfg, err := ParseConfig(filepath.Join("dir", "k.json"), data)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || len(ce.Problems) == 0 {
				t.Fatalf("error %v (%T) is not a *ConfigError with problems", err, err)
			}
			return
		}
		// A config that parsed gets valid defaults.
		d := cfg.withDefaults()
		if d.PoolSize < 1 || d.StartupBudget <= 0 || d.Deadlines.Intercept <= 0 {
			t.Fatalf("defaults not applied: %+v", d)
		}
	})
}
