package config_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/extkernel/extkernel/kernel/config"
)

// Load reports every problem of a config file with its key path.
func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "kernel.json")
	os.WriteFile(path, []byte(`{"format": 1, "pool_size": 0, "policy": {"audit": "maybe"}, "colour": "blue"}`), 0o644)
	_, err := config.Load(path)
	fmt.Println(err.(*config.Error).Problems)
	// Output:
	// [colour: unknown key policy.audit: "maybe" is not "required" or "optional"]
}

// Validate reports every problem of a Config built in Go, each named by
// its key in the file, in the words Load would use for the same values.
func ExampleConfig_Validate() {
	cfg := config.Config{PoolSize: -1, Policy: map[string]config.FailurePolicy{"audit": "maybe"}}
	fmt.Println(cfg.Validate())
	// Output:
	// pool_size: must be at least 1, got -1
	// policy.audit: "maybe" is not "required" or "optional"
}
