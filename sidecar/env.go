package sidecar

import (
	"os"

	"github.com/extkernel/extkernel/internal/wire"
)

// buildEnv returns the plugin's environment (wire.PluginEnv): the
// allowlisted host variables, the manifest's env over them, Options.Env
// over those, the EXTKERNEL_* variables over all. lookup reads the host
// environment (os.LookupEnv outside tests).
func (c *Client) buildEnv(dataDir string, lookup func(string) (string, bool)) []string {
	return wire.PluginEnv(lookup, c.rt.Env, c.opts.Env, c.pkg.Name, c.version(), c.pluginDir(), dataDir)
}

var hostLookupEnv = os.LookupEnv
