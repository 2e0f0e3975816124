package sdktest

import (
	"os"
	"sort"

	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// What the suite takes from the host (package sidecar), so that it starts
// a plugin exactly as the kernel does: the environment (protocol.md §10)
// and the heartbeat timeout (§5.6).

// heartbeatTimeout bounds the answer to a ping.
const heartbeatTimeout = sidecar.DefaultHeartbeatTimeout

// pluginEnv returns the environment the kernel gives pkg's process, sorted:
// the allowlisted host variables that are set, the manifest's env over
// them, extra over those, the kernel's EXTKERNEL_* variables over all.
func pluginEnv(pkg *pluginpkg.Package, extra map[string]string, dataDir string) []string {
	env := make(map[string]string)
	for _, k := range sidecar.AllowedHostEnv() {
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
	env[sidecar.EnvPluginName] = pkg.Name
	env[sidecar.EnvPluginVersion] = pkg.Manifest.Version.String()
	env[sidecar.EnvPluginDir] = pkg.Dir
	env[sidecar.EnvDataDir] = dataDir
	env[sidecar.EnvProtocolVersion] = protocol.Version
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
