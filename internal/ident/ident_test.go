package ident

import "testing"

func TestValidateDotted(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{"tool.before", ""},
		{"storage.kv", ""},
		{"a", ""},
		{"a1.b_2.c-3", ""},
		{"0day.x", ""},
		{"", "point must not be empty"},
		{".a", `".a" is not a valid point: segment 1 ("") is empty`},
		{"a.", `"a." is not a valid point: segment 2 ("") is empty`},
		{"a..b", `"a..b" is not a valid point: segment 2 ("") is empty`},
		{"Tool.before", `"Tool.before" is not a valid point: segment 1 ("Tool") contains an upper-case letter (identifiers are lower-case)`},
		{"tool before", `"tool before" is not a valid point: segment 1 ("tool before") contains whitespace`},
		{"tool._x", `"tool._x" is not a valid point: segment 2 ("_x") must start with a lower-case letter or digit`},
		{"tool/x", `"tool/x" is not a valid point: segment 1 ("tool/x") contains '/' (allowed: a-z, 0-9, '_', '-')`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			err := ValidateDotted("point", tt.in)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("ValidateDotted(%q) = %q, want %q", tt.in, got, tt.wantErr)
			}
		})
	}
	long := make([]byte, MaxLen+1)
	for i := range long {
		long[i] = 'a'
	}
	if err := ValidateDotted("point", string(long)); err == nil {
		t.Errorf("ValidateDotted(%d bytes) = nil, want error", len(long))
	}
}
