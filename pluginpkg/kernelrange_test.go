package pluginpkg

import (
	"errors"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/protocol"
)

func TestKernelConstraint(t *testing.T) {
	tests := []struct {
		constraint string
		upgrade    string // "" means accepted
	}{
		{"^1.0", ""},
		{">=1.0.0, <2.0.0", ""},
		{"^2.0", "host"},
		{">=1.1.0", ""}, // a plugin that calls (protocol 1.1)
		{">=1.2.0", ""}, // a producer that honours window_bytes (protocol 1.2)
		{">=1.3.0", ""}, // a plugin that reports progress (protocol 1.3)
		{">=1.4.0", ""}, // a plugin that announces its features (protocol 1.4)
		{">1.4.0", "host"},
		{"~0.9", "plugin"},
		{"<1.0.0", "plugin"},
	}
	for _, tt := range tests {
		t.Run(tt.constraint, func(t *testing.T) {
			c, err := semver.NewConstraint(tt.constraint)
			if err != nil {
				t.Fatal(err)
			}
			m := &Manifest{Name: "p", Kernel: c, KernelText: tt.constraint}
			err = m.CheckKernel()
			var ve *protocol.VersionError
			switch {
			case tt.upgrade == "" && err != nil:
				t.Errorf("err = %v, want accepted", err)
			case tt.upgrade != "" && (!errors.As(err, &ve) || ve.Upgrade != tt.upgrade || !strings.Contains(ve.Error(), "plugin wants protocol "+tt.constraint+" but")):
				t.Errorf("err = %v, want upgrade the %s", err, tt.upgrade)
			}
		})
	}
}
