package pluginpkg

import (
	"sync"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/protocol"
)

// hostProtocol is protocol.Version parsed once: semver.NewVersion matches a
// regular expression, a few microseconds of every start.
var hostProtocol = sync.OnceValue(func() *semver.Version { return semver.MustParse(protocol.Version) })

// CheckKernel reports whether the manifest's "kernel" range admits
// protocol.Version, the protocol this host speaks. It returns nil when the
// manifest has no range or the range includes protocol.Version; otherwise a
// *protocol.VersionError naming the range and saying which side to
// upgrade: the host when a later protocol version would satisfy the range,
// the plugin otherwise.
//
// A host makes this check before it spawns anything; tools that only read
// manifests, such as `kernelctl validate` and `kernelctl doctor`, call it to
// report the same sentence without starting the plugin.
func (m *Manifest) CheckKernel() error {
	k := m.Kernel
	host := hostProtocol()
	if k == nil || k.Check(host) {
		return nil
	}
	upgrade := "plugin"
	for _, v := range []semver.Version{host.IncPatch(), host.IncMinor(), host.IncMajor(), host.IncMajor().IncMajor()} {
		if k.Check(&v) {
			upgrade = "host"
			break
		}
	}
	wanted := m.KernelText
	if wanted == "" {
		wanted = k.String()
	}
	return protocol.NewVersionError(wanted, upgrade)
}
