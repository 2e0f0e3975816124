package access

import "testing"

func TestCheck(t *testing.T) {
	tests := []struct {
		name      string
		tok       Token
		wantPanic bool
	}{
		{"grant", Grant, false},
		{"zero token", Token{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if got := recover() != nil; got != tt.wantPanic {
					t.Errorf("panicked %v, want %v", got, tt.wantPanic)
				}
			}()
			tt.tok.Check("test")
		})
	}
}
