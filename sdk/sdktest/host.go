package sdktest

import (
	"os"
	"sort"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// What the suite takes from the host (package internal/wire), so that it starts
// a plugin exactly as the kernel does: the environment (protocol.md §10)
// and the heartbeat timeout (§5.6).

// heartbeatTimeout bounds the answer to a ping.
const heartbeatTimeout = wire.DefaultHeartbeatTimeout

// pluginEnv returns the environment the kernel gives pkg's process, sorted:
// the allowlisted host variables that are set, the manifest's env over
// them, extra over those, the kernel's EXTKERNEL_* variables over all.
func pluginEnv(pkg *pluginpkg.Package, extra map[string]string, dataDir string) []string {
	env := make(map[string]string)
	for _, k := range wire.AllowedHostEnv() {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	for k, v := range pkg.Manifest.Runtime.Env {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	env[wire.EnvPluginName] = pkg.Name
	env[wire.EnvPluginVersion] = pkg.Manifest.Version.String()
	env[wire.EnvPluginDir] = pkg.Dir
	env[wire.EnvDataDir] = dataDir
	env[wire.EnvProtocolVersion] = protocol.Version
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
