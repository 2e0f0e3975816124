package sidecar

import "github.com/extkernel/extkernel/pluginpkg"

// CheckKernelRange reports whether pkg's manifest "kernel" range admits
// protocol.Version, the protocol this host speaks. It returns nil when the
// manifest has no range or the range includes protocol.Version; otherwise a
// *VersionError naming the range and saying which side to upgrade: the host
// when a later protocol version would satisfy the range, the plugin
// otherwise. pkg and its Manifest must not be nil.
//
// Start makes this check before it spawns anything (the error is then the
// cause of a *StartError in PhaseVersion); tools that only read manifests,
// such as `kernelctl validate` and `kernelctl doctor`, call it to report
// the same sentence without starting the plugin.
func CheckKernelRange(pkg *pluginpkg.Package) error { return checkKernelConstraint(pkg) }
