package sidecar

import (
	"os"
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

// Variables the kernel sets for every plugin; they override the manifest's
// env.
const (
	EnvPluginName      = "EXTKERNEL_PLUGIN_NAME"
	EnvPluginVersion   = "EXTKERNEL_PLUGIN_VERSION"
	EnvPluginDir       = "EXTKERNEL_PLUGIN_DIR"
	EnvDataDir         = "EXTKERNEL_DATA_DIR"
	EnvProtocolVersion = "EXTKERNEL_PROTOCOL_VERSION"
)

// buildEnv returns the plugin's environment, sorted: the allowlisted host
// variables that are set, then the manifest's env (Plugin.Env) over them, then the
// host-provided extra variables (Options.Env) over those, then the kernel's
// EXTKERNEL_* variables over all. lookup reads the host environment
// (os.LookupEnv outside tests).
func buildEnv(p *Plugin, extra map[string]string, dataDir string, lookup func(string) (string, bool)) []string {
	env := make(map[string]string)
	for _, k := range allowedHostEnv {
		if v, ok := lookup(k); ok {
			env[k] = v
		}
	}
	for k, v := range p.Env {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	env[EnvPluginName] = p.Name
	env[EnvPluginVersion] = p.Version
	env[EnvPluginDir] = p.Dir
	env[EnvDataDir] = dataDir
	env[EnvProtocolVersion] = protocol.Version
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

var hostLookupEnv = os.LookupEnv
