package config_test

import (
	"fmt"
	"testing"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/kernel/config"
)

func TestProvide(t *testing.T) {
	if p := config.Provide("host.log", "1.2.0"); p.Key != "host.log" || p.Version == nil || p.Version.String() != "1.2.0" {
		t.Errorf("Provide(host.log, 1.2.0) = %+v", p)
	}
	cfg := config.Config{Capabilities: []capability.Provided{
		config.Provide("host.log", "1.0.0"),
		config.Provide("host.db", "1.0"),
		config.Provide("Host.Fs", "2.0.0"),
	}}
	want := `capabilities[1].version: missing or not a valid semver version
capabilities[2].capability: "Host.Fs" is not a valid capability key: segment 1 ("Host") contains an upper-case letter (identifiers are lower-case)`
	if err := cfg.Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate() = %v\nwant %s", err, want)
	}
}

// A host builds its capabilities in Go from strings, without a semver
// package; Validate names each bad entry by its key path.
func ExampleProvide() {
	cfg := config.Config{Home: "home", Capabilities: []capability.Provided{
		config.Provide("host.log", "1.0.0"),
		config.Provide("host.kv", "v2"),
	}}
	fmt.Println(cfg.Capabilities[0].Version)
	fmt.Println(cfg.Validate())
	// Output:
	// 1.0.0
	// capabilities[1].version: missing or not a valid semver version
}
