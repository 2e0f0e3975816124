package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/extkernel/extkernel/kernel/config"
)

// TestRelativeHomeDataDir starts a plugin that writes into its data
// directory from a home given relative to the working directory, directly
// (Config.Home) or through a config file given by a relative path: the data
// directory sent in the environment and in initialize is absolute, and the
// plugin, which runs in its package directory, can write there.
func TestRelativeHomeDataDir(t *testing.T) {
	tests := []struct {
		name   string
		config func(t *testing.T, base string) config.Config
	}{
		{"relative Config.Home", func(_ *testing.T, base string) config.Config { return testConfig(base) }},
		{"relative config file", func(t *testing.T, base string) config.Config {
			writeJSON(t, "kernel.json", map[string]any{"format": 1, "home": base})
			cfg, err := config.Load("kernel.json")
			if err != nil {
				t.Fatal(err)
			}
			if !filepath.IsAbs(cfg.Home) {
				t.Errorf("LoadConfig: home %q is not absolute", cfg.Home)
			}
			return testConfig(cfg.Home)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := writeHome(t, plug{name: "writer", env: map[string]string{"SCRIPT_DATA": "store"}})
			t.Chdir(filepath.Dir(home))
			cfg := tt.config(t, filepath.Base(home))
			k := startKernel(t, cfg)
			out, err := k.CallProvider(context.Background(), "plugin/writer/store", json.RawMessage(`"hello"`))
			if err != nil {
				t.Fatalf("the plugin could not write into its data directory: %v", err)
			}
			var got struct {
				DataDir string `json:"data_dir"`
				Env     string `json:"env"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(home, "data", "writer")
			if got.DataDir != want || got.Env != want {
				t.Errorf("data_dir = %q, EXTKERNEL_DATA_DIR = %q; want both %q", got.DataDir, got.Env, want)
			}
			if data, err := os.ReadFile(filepath.Join(want, "written")); err != nil || string(data) != `"hello"` {
				t.Errorf("written = %q, %v; want %q", data, err, `"hello"`)
			}
		})
	}
}

// TestFirstGeneration numbers the first generation from
// Config.FirstGeneration and counts on from it.
func TestFirstGeneration(t *testing.T) {
	tests := []struct {
		first      uint64
		wantNumber uint64
	}{{0, 1}, {1, 1}, {7, 7}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.first), func(t *testing.T) {
			p := plug{name: "alpha"}
			home := writeHome(t, p)
			cfg := testConfig(home)
			cfg.FirstGeneration = tt.first
			k := startKernel(t, cfg)
			if n := k.Current().Number(); n != tt.wantNumber {
				t.Errorf("first generation = %d, want %d", n, tt.wantNumber)
			}
			p.version = "1.1.0"
			rewrite(t, home, p)
			res, err := k.Reload(context.Background())
			if err != nil || res.Generation.Number() != tt.wantNumber+1 {
				t.Errorf("Reload: %v, %v; want generation %d", res, err, tt.wantNumber+1)
			}
		})
	}
}
