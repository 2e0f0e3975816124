package severity_test

import (
	"testing"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/severity"
)

// TestOneSeverity holds that capability and contribution share one
// Severity: a value of one is a value of the other (this compiles only
// while both are aliases of severity.Severity), and the constants agree.
func TestOneSeverity(t *testing.T) {
	tests := []struct {
		cap  capability.Severity
		cont contribution.Severity
		want severity.Severity
	}{
		{capability.Error, contribution.Error, severity.Error},
		{capability.Warning, contribution.Warning, severity.Warning},
	}
	for _, tt := range tests {
		if tt.cap != tt.cont || tt.cap != tt.want {
			t.Errorf("capability %v, contribution %v, want %v", tt.cap, tt.cont, tt.want)
		}
	}
}
