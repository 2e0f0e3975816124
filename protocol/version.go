package protocol

import "fmt"

// Version is the protocol version this package implements. It is checked
// against a manifest's "kernel" constraint and sent in initialize.
const Version = "1.1.0"

// VersionError reports that a plugin and this host speak incompatible
// protocol versions, and says which side to upgrade. It is returned both
// for a manifest whose "kernel" range excludes Version (before anything is
// spawned) and for a handshake answer whose protocol_version has another
// major version than Version.
type VersionError struct {
	// Plugin is the plugin's name.
	Plugin string
	// Host is the protocol version this host speaks (Version).
	Host string
	// Wanted is what the plugin wants: its manifest's kernel constraint, or
	// the protocol_version it answered.
	Wanted string
	// Upgrade is "host" or "plugin".
	Upgrade string
}

// Error returns a sentence saying which side to upgrade.
func (e *VersionError) Error() string {
	return fmt.Sprintf("plugin wants protocol %s but this host speaks %s: upgrade the %s", e.Wanted, e.Host, e.Upgrade)
}
