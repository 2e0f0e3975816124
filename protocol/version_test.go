package protocol

import "testing"

// TestVersionError holds the message, which kernelctl and the reports quote.
func TestVersionError(t *testing.T) {
	tests := []struct {
		wanted, upgrade, want string
	}{
		{"^2.0", "host", "plugin wants protocol ^2.0 but this host speaks " + Version + ": upgrade the host"},
		{"0.9.0", "plugin", "plugin wants protocol 0.9.0 but this host speaks " + Version + ": upgrade the plugin"},
	}
	for _, tt := range tests {
		t.Run(tt.wanted, func(t *testing.T) {
			e := NewVersionError(tt.wanted, tt.upgrade)
			if e.Upgrade != tt.upgrade || e.Error() != tt.want {
				t.Errorf("NewVersionError(%q, %q) = Upgrade %q, %q; want %q, %q", tt.wanted, tt.upgrade, e.Upgrade, e.Error(), tt.upgrade, tt.want)
			}
		})
	}
}
