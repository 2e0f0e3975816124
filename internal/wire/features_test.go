package wire

import (
	"reflect"
	"testing"
)

// TestImpliedFeatures holds what a side that announces no features has,
// by its version (docs/protocol.md §4.6), and which versions announce.
func TestImpliedFeatures(t *testing.T) {
	tests := []struct {
		version   string
		implied   []string
		announces bool
	}{
		{"1.0.0", []string{}, false},
		{"v1", []string{}, false},
		{"1.1.0", []string{"calls", "cancel", "contributions", "streams", "trace"}, false},
		{"1.2", []string{"calls", "cancel", "contributions", "streams", "trace"}, false},
		{"1.3.0", []string{"calls", "cancel", "contributions", "progress", "streams", "trace"}, false},
		{"1.3.0-rc.1", []string{"calls", "cancel", "contributions", "progress", "streams", "trace"}, false},
		{"1.4.0", []string{"calls", "cancel", "contributions", "progress", "streams", "trace"}, true},
		{"1.17.2+build", []string{"calls", "cancel", "contributions", "progress", "streams", "trace"}, true},
		{"2.0.0", []string{}, false},
		{"garbage", []string{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			if got := ImpliedFeatures(tt.version).Names(); !reflect.DeepEqual(got, tt.implied) {
				t.Errorf("ImpliedFeatures = %v, want %v", got, tt.implied)
			}
			if got := Announces(tt.version); got != tt.announces {
				t.Errorf("Announces = %v, want %v", got, tt.announces)
			}
		})
	}
}

// TestParseFeatures holds that unknown names and repeats are ignored and
// that names come out sorted, each a bit of its own.
func TestParseFeatures(t *testing.T) {
	tests := []struct {
		names []string
		want  []string
	}{
		{nil, []string{}},
		{[]string{"trace", "calls", "calls"}, []string{"calls", "trace"}},
		{[]string{"telepathy", "progress", ""}, []string{"progress"}},
		{[]string{"streams", "progress", "contributions", "cancel", "calls", "trace"}, []string{"calls", "cancel", "contributions", "progress", "streams", "trace"}},
	}
	for _, tt := range tests {
		if got := ParseFeatures(tt.names).Names(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseFeatures(%q) = %v, want %v", tt.names, got, tt.want)
		}
	}
	for _, n := range AllFeatures.Names() {
		if f := FeatureBit(n); FeatureName(f) != n || !AllFeatures.Has(f) {
			t.Errorf("feature %q: bit %b names %q", n, f, FeatureName(f))
		}
	}
	if FeatureName(HasCalls|HasTrace) != "" || FeatureBit("x") != 0 {
		t.Error("FeatureName of two bits or FeatureBit of an unknown name is not empty")
	}
}

// TestProtocolUse holds the usage key of each handshake's version: the
// fixed set of UsageKeys, whatever the plugin answered.
func TestProtocolUse(t *testing.T) {
	tests := []struct{ answered, want string }{
		{"1.0.0", "protocol/1.0"}, {"v1", "protocol/1.0"}, {"1.2", "protocol/1.2"},
		{"1.4.0", "protocol/1.4"}, {"1.5.0", UseProtocolLater}, {"1.400000000000000000000.0", UseProtocolLater},
	}
	for _, tt := range tests {
		got := ProtocolUse(tt.answered)
		if got != tt.want {
			t.Errorf("ProtocolUse(%q) = %q, want %q", tt.answered, got, tt.want)
		}
		found := false
		for _, k := range UsageKeys {
			found = found || k == got
		}
		if !found {
			t.Errorf("ProtocolUse(%q) = %q, not one of UsageKeys", tt.answered, got)
		}
	}
}
