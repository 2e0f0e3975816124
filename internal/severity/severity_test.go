package severity

import "testing"

func TestString(t *testing.T) {
	tests := []struct {
		in   Severity
		want string
	}{
		{Error, "error"},
		{Warning, "warning"},
		{Severity(7), "error"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("Severity(%d).String() = %q, want %q", int(tt.in), got, tt.want)
		}
	}
}
