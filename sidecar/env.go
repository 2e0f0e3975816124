package sidecar

import (
	"os"
	"sort"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// buildEnv returns the plugin's environment, sorted: the allowlisted host
// variables that are set (wire.AllowedHostEnv), then the manifest's env
// over them, then the host-provided extra variables (Options.Env) over
// those, then the kernel's EXTKERNEL_* variables over all. lookup reads
// the host environment (os.LookupEnv outside tests).
func (c *Client) buildEnv(dataDir string, lookup func(string) (string, bool)) []string {
	env := make(map[string]string)
	for _, k := range wire.AllowedHostEnv() {
		if v, ok := lookup(k); ok {
			env[k] = v
		}
	}
	for k, v := range c.rt.Env {
		env[k] = v
	}
	for k, v := range c.opts.Env {
		env[k] = v
	}
	env[wire.EnvPluginName] = c.pkg.Name
	env[wire.EnvPluginVersion] = c.version()
	env[wire.EnvPluginDir] = c.pkg.Dir
	env[wire.EnvDataDir] = dataDir
	env[wire.EnvProtocolVersion] = protocol.Version
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

var hostLookupEnv = os.LookupEnv
