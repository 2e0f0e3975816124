package config

import (
	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
)

// Provide returns the host capability key at version, for
// Config.Capabilities, from a version written as a string ("1.2.0"), so
// that a host builds its Config in Go without importing a semver package:
//
//	cfg.Capabilities = []capability.Provided{config.Provide("host.log", "1.0.0")}
//
// The version must be strict semver, as the config file's
// capabilities[i].version: for one that is not, Provide returns the key
// with no Version, and Config.Validate (so kernel.New and
// kernel.Kernel.Reconfigure) refuses it at its field path,
// `capabilities[0].version: missing or not a valid semver version`. The
// key is checked by Validate too.
func Provide(key capability.Key, version string) capability.Provided {
	p := capability.Provided{Key: key}
	if v, err := semver.StrictNewVersion(version); err == nil {
		p.Version = v
	}
	return p
}
