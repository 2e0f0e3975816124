package wire

import "slices"

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
