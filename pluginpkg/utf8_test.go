package pluginpkg

import (
	"testing"
)

// TestParseUTF8 checks that a manifest must be UTF-8: bytes that are not are
// refused at their field path (encoding/json alone would replace them with
// U+FFFD), a byte-order mark is named as such, and multi-byte UTF-8 is read
// as written.
func TestParseUTF8(t *testing.T) {
	const head = "{\"format\": 1, \"name\": \"x\", \"version\": \"1.0.0\",\n"
	tests := []struct {
		name        string
		data        string
		want        string // the error text; "" when the manifest is valid
		description string // the description of a valid manifest
	}{
		{name: "latin-1 byte in a value", data: head + "\"description\": \"caf\xe9\"}",
			want: "p.json: description: contains a byte that is not UTF-8 (0xe9 at line 2, column 20); a manifest must be UTF-8"},
		{name: "column counts runes", data: head + "\"description\": \"日本\xff\"}",
			want: "p.json: description: contains a byte that is not UTF-8 (0xff at line 2, column 19); a manifest must be UTF-8"},
		{name: "truncated sequence in an array element", data: head + "\"runtime\": {\"command\": \"x\", \"args\": [\"ok\", \"\xc3(\"]}}",
			want: "p.json: runtime.args[1]: contains a byte that is not UTF-8 (0xc3 at line 2, column 45); a manifest must be UTF-8"},
		{name: "env value", data: head + "\"runtime\": {\"command\": \"x\", \"env\": {\"A\": \"\xfe\"}}}",
			want: "p.json: runtime.env.A: contains a byte that is not UTF-8 (0xfe at line 2, column 43); a manifest must be UTF-8"},
		{name: "root key", data: head + "\"desc\xffription\": \"x\"}",
			want: "p.json: [\"desc\\xffription\"]: key contains a byte that is not UTF-8 (0xff at line 2, column 6); a manifest must be UTF-8"},
		{name: "every bad string is reported", data: head + "\"description\": \"\xff\", \"runtime\": {\"command\": \"\xff\"}}",
			want: "p.json: description: contains a byte that is not UTF-8 (0xff at line 2, column 17); a manifest must be UTF-8\n" +
				"p.json: runtime.command: contains a byte that is not UTF-8 (0xff at line 2, column 45); a manifest must be UTF-8"},
		{name: "invalid byte outside strings", data: head + "\xff}",
			want: "p.json: invalid JSON at line 2, column 1: invalid byte 0xff (not UTF-8) looking for beginning of object key string"},
		{name: "utf-8 byte-order mark", data: "\xef\xbb\xbf" + head + "\"description\": \"x\"}",
			want: "p.json: starts with a UTF-8 byte-order mark; remove it"},
		{name: "byte-order mark and other problems", data: "\xef\xbb\xbf{\"format\": 1, \"name\": \"X\", \"version\": \"1.0.0\"}",
			want: "p.json: starts with a UTF-8 byte-order mark; remove it\n" +
				"p.json: name: \"X\" is not a valid package name (use 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit)"},
		{name: "utf-16 byte-order mark", data: "\xff\xfe{\x00}\x00",
			want: "p.json: starts with a UTF-16 byte-order mark; save it as UTF-8 without one"},
		{name: "multi-byte utf-8", data: head + "\"description\": \"Café — 日本語 ✓ 🙂\"}",
			description: "Café — 日本語 ✓ 🙂"},
		{name: "escaped non-ascii", data: head + "\"description\": \"caf\\u00e9 \\ud83d\\ude42\"}",
			description: "café 🙂"},
		{name: "replacement character written as utf-8", data: head + "\"description\": \"\xef\xbf\xbd\"}",
			description: "\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse("p.json", []byte(tt.data))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Parse: %v", err)
			case tt.want == "":
				if m.Description != tt.description {
					t.Errorf("description = %q, want %q", m.Description, tt.description)
				}
			case err == nil:
				t.Fatalf("Parse accepted the manifest; want\n%s", tt.want)
			case err.Error() != tt.want:
				t.Errorf("error text:\n%s\nwant:\n%s", err, tt.want)
			}
		})
	}
}
