package generation

import (
	"testing"
)

// TestParseSnapshotLocatesErrors holds the snapshot reader to the shared
// JSON-file reader: every decoding problem names the file, its line and
// its column.
func TestParseSnapshotLocatesErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"syntax", "{\"format\": 1,\n \"generation\": x}",
			"snapshot s.json: line 2, column 16: invalid character 'x' looking for beginning of value"},
		{"wrong type", "{\"format\": 1,\n \"generation\": \"7\"}",
			"snapshot s.json: line 2, column 18: json: cannot unmarshal string into Go struct field Snapshot.generation of type uint64"},
		{"truncated", `{"format": 1, "packages": [`, "snapshot s.json: line 1, column 28: unexpected end of JSON input"},
		{"trailing data", "{\"format\": 1}\n{}", "snapshot s.json: line 2, column 1: invalid data after the top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseSnapshot("s.json", []byte(tt.in))
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant  %s", err, tt.want)
			}
		})
	}
}
