package wire

import (
	"slices"
	"sort"

	"github.com/extkernel/extkernel/protocol"
)

// allowedHostEnv lists the host environment variables a plugin inherits.
var allowedHostEnv = []string{"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ", "USER"}

// AllowedHostEnv returns the names of the host environment variables a
// plugin inherits, when set: PATH, HOME, TMPDIR, LANG, LC_ALL, TZ, USER
// (docs/protocol.md §10). The rest of the host's environment is never
// passed on.
func AllowedHostEnv() []string { return slices.Clone(allowedHostEnv) }

// Variables the host sets for every plugin (docs/protocol.md §10); they
// override the manifest's env and the host's extra variables.
const (
	EnvPluginName      = "EXTKERNEL_PLUGIN_NAME"
	EnvPluginVersion   = "EXTKERNEL_PLUGIN_VERSION"
	EnvPluginDir       = "EXTKERNEL_PLUGIN_DIR"
	EnvDataDir         = "EXTKERNEL_DATA_DIR"
	EnvProtocolVersion = "EXTKERNEL_PROTOCOL_VERSION"
)

// PluginEnv returns the environment the host gives a plugin's process,
// sorted "NAME=value" entries: the allowlisted host variables lookup finds
// (AllowedHostEnv), then manifest (the manifest's runtime.env) over them,
// then extra (the host's own, such as secrets from its config) over
// those, then the EXTKERNEL_* variables over all (docs/protocol.md §10).
// The sidecar starts a plugin with it, and the conformance suite starts
// one as the kernel does with the same function.
func PluginEnv(lookup func(string) (string, bool), manifest, extra map[string]string, name, version, dir, dataDir string) []string {
	env := make(map[string]string)
	for _, k := range allowedHostEnv {
		if v, ok := lookup(k); ok {
			env[k] = v
		}
	}
	for k, v := range manifest {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	env[EnvPluginName] = name
	env[EnvPluginVersion] = version
	env[EnvPluginDir] = dir
	env[EnvDataDir] = dataDir
	env[EnvProtocolVersion] = protocol.Version
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
