package wire

import (
	"strconv"
	"strings"
)

// Feature names: the flags of initialize's features member (protocol 1.4,
// docs/protocol.md §4.6), one per optional protocol feature. The host
// announces in InitializeParams.Features what it serves, the plugin in
// InitializeResult.Features what it uses; each side uses a feature only
// when the other announced it.
const (
	// FeatureCalls is the plugin → host request capability/call (1.1).
	FeatureCalls = "calls"
	// FeatureCancel is the plugin → host $/cancel of its own
	// capability/call (1.1).
	FeatureCancel = "cancel"
	// FeatureContributions is contributions of host-declared kinds:
	// initialize's contributions and contribution/invoke (1.1).
	FeatureContributions = "contributions"
	// FeatureProgress is the plugin → host notification $/progress (1.3).
	FeatureProgress = "progress"
	// FeatureStreams is streams (1.1), with their byte window (1.2): the
	// stream member of provider/invoke and capability/call, and
	// $/stream/chunk and $/stream/ack.
	FeatureStreams = "streams"
	// FeatureTrace is trace context (1.1): the traceparent member of a
	// call's params, either direction.
	FeatureTrace = "trace"
)

// FeaturesSince is the protocol version from which initialize carries
// features, in the host's params and in the plugin's answer.
const FeaturesSince = "1.4.0"

// Features is a set of features, one bit each, in the order of their
// names (so that a set's names come out sorted).
type Features uint8

// The bits of Features.
const (
	HasCalls Features = 1 << iota
	HasCancel
	HasContributions
	HasProgress
	HasStreams
	HasTrace

	// AllFeatures is every feature this module knows: the host announces
	// it, and so do the SDKs.
	AllFeatures = HasCalls | HasCancel | HasContributions | HasProgress | HasStreams | HasTrace
	// Features13 is what protocol 1.3 has of them: what a host implies for
	// a plugin whose answer carries no features (one before 1.4.0), as a
	// 1.3 host served those to any 1.x plugin.
	Features13 = HasCalls | HasCancel | HasContributions | HasProgress | HasStreams | HasTrace
	// features11 is what protocol 1.1 and 1.2 have of them.
	features11 = HasCalls | HasCancel | HasContributions | HasStreams | HasTrace
)

// featureNames are the names of the bits of Features, in bit order.
var featureNames = [...]string{FeatureCalls, FeatureCancel, FeatureContributions, FeatureProgress, FeatureStreams, FeatureTrace}

// FeatureBit returns the bit of the feature name, or 0 for a name this
// module does not know.
func FeatureBit(name string) Features {
	for i, n := range featureNames {
		if n == name {
			return 1 << i
		}
	}
	return 0
}

// FeatureName returns the name of the single feature f, or "" when f is
// not one bit of AllFeatures.
func FeatureName(f Features) string {
	for i, n := range featureNames {
		if f == 1<<i {
			return n
		}
	}
	return ""
}

// ParseFeatures returns the set of the names it knows; it ignores the
// others (a receiver ignores what it does not know, §2), and repeats.
func ParseFeatures(names []string) Features {
	var f Features
	for _, n := range names {
		f |= FeatureBit(n)
	}
	return f
}

// Has reports whether f holds every feature of g.
func (f Features) Has(g Features) bool { return f&g == g }

// Names returns the names of f's features, sorted; an empty set is a
// non-nil empty slice, so that it is encoded as [].
func (f Features) Names() []string {
	out := make([]string, 0, len(featureNames))
	for i, n := range featureNames {
		if f&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// ImpliedFeatures returns the features a side that speaks version, and
// sent no features, has: none for 1.0 (or what does not parse as a 1.x
// version), those of 1.1 for 1.1 and 1.2, those of 1.3 for 1.3 and later
// minors (a side of 1.4 or later announces its own: this is what a
// plugin assumes of a host before 1.4). version is read leniently: "1.3",
// "v1.3.0" and "1.3.0-rc.1" are 1.3.
func ImpliedFeatures(version string) Features {
	major, minor, ok := majorMinor(version)
	switch {
	case !ok || major != 1 || minor == 0:
		return 0
	case minor < 3:
		return features11
	}
	return Features13
}

// Announces reports whether version, a plugin's answer or a host's
// protocol_version, is one whose features member is read: 1.4.0 or a
// later 1.x (what does not parse is not).
func Announces(version string) bool {
	major, minor, ok := majorMinor(version)
	return ok && major == 1 && minor >= 4
}

// majorMinor reads the major and minor of a version written
// "[v]MAJOR[.MINOR[.PATCH]][-pre][+build]".
func majorMinor(version string) (major, minor uint64, ok bool) {
	v := strings.TrimPrefix(version, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	parts := strings.SplitN(v, ".", 3)
	var err error
	if major, err = strconv.ParseUint(parts[0], 10, 64); err != nil {
		return 0, 0, false
	}
	if len(parts) > 1 {
		if minor, err = strconv.ParseUint(parts[1], 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return major, minor, true
}
