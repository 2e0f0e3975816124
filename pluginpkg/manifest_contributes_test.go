package pluginpkg

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/extkernel/extkernel/contribution"
)

// contributesManifest is a manifest whose runtime.contributes is the JSON
// text given.
func contributesManifest(contributes string) []byte {
	return []byte(`{"format": 1, "name": "tools", "version": "1.0.0",
  "runtime": {"command": "./tools", "contributes": ` + contributes + `}}`)
}

// TestContributes reads runtime.contributes: every problem with its field
// path, the same verdict from Parse, the schema and Validate, and a
// canonical form that parses back.
func TestContributes(t *testing.T) {
	sch := compileSchema(t)
	tests := []struct {
		name        string
		contributes string
		want        map[contribution.Kind][]string
		problems    []string
		parseOnly   bool // a rule the schema cannot express
	}{
		{name: "two kinds", contributes: `{"tool": ["search.web", "fs.read"], "ui.theme": ["dark"]}`,
			want: map[contribution.Kind][]string{"tool": {"search.web", "fs.read"}, "ui.theme": {"dark"}}},
		{name: "empty object", contributes: `{}`},
		{name: "built-in kinds with their own members", contributes: `{"interceptor": ["tool.before"], "strategy": ["a"]}`,
			problems: []string{
				`runtime.contributes.interceptor: "interceptor" is a built-in kind: list its points in runtime.intercepts`,
				`runtime.contributes.strategy: "strategy" is a built-in kind: list its slots in runtime.replaces`,
			}},
		{name: "providers and actions declared", contributes: `{"provider": ["echo", "search.web"], "action": ["open"]}`,
			want: map[contribution.Kind][]string{"provider": {"echo", "search.web"}, "action": {"open"}}},
		{name: "bad provider ref", contributes: `{"provider": ["Echo"]}`,
			problems: []string{
				`runtime.contributes.provider[0]: "Echo" is not a valid provider ref: segment 1 ("Echo") contains an upper-case letter (identifiers are lower-case)`,
			}},
		{name: "bad kind", contributes: `{"Tool": ["x"]}`,
			problems: []string{`runtime.contributes.Tool: "Tool" is not a valid kind: segment 1 ("Tool") contains an upper-case letter (identifiers are lower-case)`}},
		{name: "bad and duplicate keys", contributes: `{"tool": ["search.web", "Search", "search.web"]}`,
			problems: []string{
				`runtime.contributes.tool[1]: "Search" is not a valid tool key: segment 1 ("Search") contains an upper-case letter (identifiers are lower-case)`,
				`runtime.contributes.tool[2]: duplicate tool key "search.web" (also at runtime.contributes.tool[0])`,
			}},
		{name: "empty list", contributes: `{"tool": []}`,
			problems: []string{`runtime.contributes.tool: must list at least one key (omit the kind to contribute none)`}},
		{name: "wrong types", contributes: `{"tool": "search.web", "theme": [1]}`,
			problems: []string{
				`runtime.contributes.tool: must be an array of strings, got string`,
				`runtime.contributes.theme[0]: must be a string, got number`,
			}},
		{name: "not an object", contributes: `["tool"]`,
			problems: []string{`runtime.contributes: must be an object of arrays of strings, got array`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := contributesManifest(tt.contributes)
			m, err := Parse("tools/plugin.json", data)
			schemaErr := schemaValidate(t, sch, data)
			if tt.problems != nil {
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("Parse error = %v, want a *ValidationError", err)
				}
				var got []string
				for _, p := range ve.Problems {
					got = append(got, p.Field+": "+p.Message)
				}
				if !reflect.DeepEqual(got, tt.problems) {
					t.Errorf("problems:\n%q\nwant:\n%q", got, tt.problems)
				}
				if schemaErr == nil && !tt.parseOnly {
					t.Error("the schema accepts it")
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if schemaErr != nil {
				t.Errorf("the schema refuses it: %v", schemaErr)
			}
			if !reflect.DeepEqual(m.Runtime.Contributes, tt.want) {
				t.Errorf("Contributes = %v, want %v", m.Runtime.Contributes, tt.want)
			}
			if err := m.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			out, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Parse("again", out)
			if err != nil || !reflect.DeepEqual(again.Runtime.Contributes, tt.want) {
				t.Errorf("the canonical form %s parses to %v, %v", out, again, err)
			}
		})
	}
}

// TestValidateContributes holds Manifest.Validate to Parse's rules for
// runtime.contributes built in code.
func TestValidateContributes(t *testing.T) {
	m, err := Parse("tools/plugin.json", contributesManifest(`{"tool": ["search.web"]}`))
	if err != nil {
		t.Fatal(err)
	}
	m.Runtime.Contributes = map[contribution.Kind][]string{
		"tool": {"search.web", "search.web", "Bad"}, "provider": {"X"}, "strategy": {"x"}, "theme": nil,
	}
	want := `runtime.contributes.provider[0]: "X" is not a valid provider ref: segment 1 ("X") contains an upper-case letter (identifiers are lower-case)
runtime.contributes.strategy: "strategy" is a built-in kind: list its slots in runtime.replaces
runtime.contributes.theme: must list at least one key (omit the kind to contribute none)
runtime.contributes.tool[1]: duplicate tool key "search.web" (also at runtime.contributes.tool[0])
runtime.contributes.tool[2]: "Bad" is not a valid tool key: segment 1 ("Bad") contains an upper-case letter (identifiers are lower-case)`
	if err := m.Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate =\n%v\nwant\n%s", err, want)
	}
}
