package wire

import "strconv"

// Usage keys: what a host counts, per plugin, of what the plugin uses
// (docs/protocol.md §4.6; the kernel's usage counters, docs/admin.md).
// The set is fixed: every feature's name (a use of the feature served:
// a capability/call, a stream opened, a progress received, ...), and one
// key per protocol minor a handshake answered. A deprecated feature that
// is not a feature of its own gets a key here when it is deprecated.
var UsageKeys = []string{
	FeatureCalls, FeatureCancel, FeatureContributions, FeatureProgress, FeatureStreams, FeatureTrace,
	"protocol/1.0", "protocol/1.1", "protocol/1.2", "protocol/1.3", "protocol/1.4", UseProtocolLater,
}

// UseProtocolLater is the usage key of a handshake answered with a 1.x
// minor later than this module knows (1.4).
const UseProtocolLater = "protocol/later"

// knownMinors is how many minors of protocol 1 this module knows.
const knownMinors = 5

// ProtocolUse returns the usage key of a handshake answered with the
// protocol version answered, which the host accepted (major 1):
// "protocol/1.<minor>", or UseProtocolLater for a minor it does not
// know (or cannot read).
func ProtocolUse(answered string) string {
	_, minor, ok := majorMinor(answered)
	if !ok || minor >= knownMinors {
		return UseProtocolLater
	}
	return "protocol/1." + strconv.FormatUint(minor, 10)
}
