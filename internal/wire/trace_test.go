package wire

import (
	"context"
	"reflect"
	"testing"
)

func TestValidTraceparent(t *testing.T) {
	tests := []struct {
		tp   string
		want bool
	}{
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true},
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false}, // version
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false}, // zero trace id
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false}, // zero span id
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false}, // upper case
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1", false},  // short
		{"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01", false}, // separator
		{"", false},
	}
	for _, tt := range tests {
		if got := ValidTraceparent(tt.tp); got != tt.want {
			t.Errorf("ValidTraceparent(%q) = %v, want %v", tt.tp, got, tt.want)
		}
		if got := Traceparent(WithTraceparent(context.Background(), tt.tp)); (got != "") != tt.want {
			t.Errorf("WithTraceparent(%q) carries %q", tt.tp, got)
		}
	}
}

// TestSetTraceparent sets and clears the traceparent of each host
// request's params and leaves other values alone.
func TestSetTraceparent(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, p := range []any{InterceptParams{}, StrategyInvokeParams{}, ProviderInvokeParams{}, ActionRunParams{}, ContributionInvokeParams{}} {
		set := SetTraceparent(p, tp)
		if got := reflect.ValueOf(set).FieldByName("Traceparent").String(); got != tp {
			t.Errorf("%T: traceparent %q after setting", p, got)
		}
		if got := reflect.ValueOf(SetTraceparent(set, "")).FieldByName("Traceparent").String(); got != "" {
			t.Errorf("%T: traceparent %q after clearing", p, got)
		}
	}
	if got := SetTraceparent(42, tp); got != 42 {
		t.Errorf("SetTraceparent(42) = %v", got)
	}
}
