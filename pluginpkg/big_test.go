package pluginpkg

import (
	"strings"
	"testing"
)

// TestParseHostileInputs feeds inputs near the size limit that would be slow
// with a quadratic walk, and checks the first problem reported for each.
func TestParseHostileInputs(t *testing.T) {
	dupKeys := `{"format":1,"name":"a","version":"1.0.0","description":"x"` +
		strings.Repeat(`,"description":"x"`, (MaxManifestSize-100)/18) + "}"
	unknown := `{"format":1,"name":"a","version":"1.0.0"` + strings.Repeat(`,"descriptio":1`, (MaxManifestSize-100)/16) + "}"
	deep := `{"runtime":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "}"
	points := `{"format":1,"name":"a","version":"1.0.0","runtime":{"command":"x","intercepts":["a"` +
		strings.Repeat(`,"a"`, (MaxManifestSize-200)/4) + "]}}"
	tests := []struct {
		name, data, first string
	}{
		{"duplicate keys", dupKeys, `description: duplicate key at line 1 (first at line 1)`},
		{"unknown fields", unknown, `descriptio: unknown field (did you mean "description"?)`},
		{"deep nesting", deep, `invalid JSON at line 1, column 10011: invalid character '[' exceeded max depth`},
		{"duplicate points", points, `runtime.intercepts[1]: duplicate point "a" (also at runtime.intercepts[0])`},
		{"too large", strings.Repeat(" ", MaxManifestSize+1), `manifest is larger than 1048576 bytes`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("", []byte(tc.data))
			ve, ok := err.(*ValidationError)
			if !ok {
				t.Fatalf("err = %v", err)
			}
			if got := ve.Problems[0].String(); got != tc.first {
				t.Errorf("first problem = %s, want %s (%d problems)", got, tc.first, len(ve.Problems))
			}
		})
	}
}
