package protocol

import "fmt"

// Version is the protocol version this package implements. It is checked
// against a manifest's "kernel" constraint and sent in initialize.
const Version = "1.4.0"

// VersionError reports that a plugin and this host speak incompatible
// protocol versions, and says which side to upgrade. It is returned both
// for a manifest whose "kernel" range excludes Version (before anything is
// spawned) and for a handshake answer whose protocol_version has another
// major version than Version. The error wrapping it names the plugin; its
// message quotes what the plugin wants and the host's Version.
type VersionError struct {
	// Upgrade is "host" or "plugin".
	Upgrade string

	// wanted is what the plugin wants: its manifest's kernel constraint,
	// or the protocol_version it answered.
	wanted string
	// host is the protocol version this host speaks (Version).
	host string
}

// NewVersionError returns the error of a plugin that wants protocol wanted
// (its manifest's kernel constraint, or the protocol_version it answered)
// from this host, which speaks Version; upgrade ("host" or "plugin") is the
// side to upgrade.
func NewVersionError(wanted, upgrade string) *VersionError {
	return &VersionError{Upgrade: upgrade, wanted: wanted, host: Version}
}

// Error returns a sentence saying which side to upgrade.
func (e *VersionError) Error() string {
	return fmt.Sprintf("plugin wants protocol %s but this host speaks %s: upgrade the %s", e.wanted, e.host, e.Upgrade)
}
