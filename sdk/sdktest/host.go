package sdktest

import (
	"os"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
)

// What the suite takes from the host (package internal/wire), so that it starts
// a plugin exactly as the kernel does: the environment (protocol.md §10)
// and the heartbeat timeout (§5.6).

// heartbeatTimeout bounds the answer to a ping.
const heartbeatTimeout = wire.DefaultHeartbeatTimeout

// env is the environment the plugin starts with.
func (r *runner) env() []string { return pluginEnv(r.pkg, r.opts.Env, r.dataDir) }

// pluginEnv returns the environment the kernel gives pkg's process
// (wire.PluginEnv), with extra as the host's own variables.
func pluginEnv(pkg *pluginpkg.Package, extra map[string]string, dataDir string) []string {
	return wire.PluginEnv(os.LookupEnv, pkg.Manifest.Runtime.Env, extra, pkg.Name, pkg.Manifest.Version.String(), pkg.Dir, dataDir)
}
