package pluginpkg

import (
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
)

// TestParseRules covers edge cases of each rule with inline manifests. An
// empty want means the manifest is valid.
func TestParseRules(t *testing.T) {
	const head = `{"format":1,"name":"a","version":"1.0.0"`
	rt := func(body string) string { return head + `,"runtime":{` + body + `}}` }
	methods := func(m string) string {
		return head + `,"runtime":{"command":"a"},"provides":[{"capability":"k","version":"1.0.0","methods":` + m + `}]}`
	}
	tests := []struct {
		name, doc, want string
	}{
		{"command dot", rt(`"command":"."`), `runtime.command: "." names the package directory itself, not an executable`},
		{"command dot slash", rt(`"command":"./"`), `runtime.command: "./" names the package directory itself, not an executable`},
		{"command dotdot", rt(`"command":".."`), `runtime.command: ".." escapes the package directory`},
		{"command hidden file", rt(`"command":".plugin"`), ``},
		{"command nested relative", rt(`"command":"bin/x"`), ``},
		{"command inner dotdot", rt(`"command":"./a/b/../../c"`), ``},
		{"command NUL", rt(`"command":"a\u0000b"`), `runtime.command: must not contain a NUL byte`},
		{"arg NUL", rt(`"command":"a","args":["ok","\u0000"]`), `runtime.args[1]: must not contain a NUL byte`},
		{"arg type", rt(`"command":"a","args":["ok",2]`), `runtime.args[1]: must be a string, got number`},
		{"args type", rt(`"command":"a","args":"x"`), `runtime.args: must be an array of strings, got string`},
		{"name too long", `{"format":1,"name":"` + strings.Repeat("a", 65) + `","version":"1.0.0"}`,
			`name: "` + strings.Repeat("a", 65) + `" is not a valid package name: longer than 64 bytes`},
		{"name 64 bytes", `{"format":1,"name":"` + strings.Repeat("a", 64) + `","version":"1.0.0"}`, ``},
		{"name leading dash", `{"format":1,"name":"-a","version":"1.0.0"}`,
			`name: "-a" is not a valid package name (use 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit)`},
		{"name empty", `{"format":1,"name":"","version":"1.0.0"}`,
			`name: must not be empty (use 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit)`},
		{"name dots", `{"format":1,"name":"a.b-c_d.","version":"1.0.0"}`, ``},
		{"env duplicate", rt(`"command":"a","env":{"A":"1",` + "\n" + `"A":"2"}`), `runtime.env.A: duplicate key at line 2 (first at line 1)`},
		{"env value type", rt(`"command":"a","env":{"A":true}`), `runtime.env.A: must be a string, got boolean`},
		{"env empty key", rt(`"command":"a","env":{"":"x"}`), `runtime.env: environment variable name must not be empty`},
		{"env lower-case reserved prefix", rt(`"command":"a","env":{"extkernel_x":"x"}`), ``},
		{"env type", rt(`"command":"a","env":["A=1"]`), `runtime.env: must be an object of strings, got array`},
		{"quoted unknown key", head + `,"my field":1}`, `["my field"]: unknown field`},
		{"quoted nested unknown key", rt(`"command":"a","a.b":1`), `runtime["a.b"]: unknown field`},
		{"suggest version", `{"format":1,"name":"a","verison":"1.0.0"}`,
			lines(`verison: unknown field (did you mean "version"?)`, `version: required field is missing`)},
		{"suggest requires", head + `,"requirs":[]}`, `requirs: unknown field (did you mean "requires"?)`},
		{"no suggestion for short keys", head + `,"x":1}`, `x: unknown field`},
		{"format string", `{"format":"1","name":"a","version":"1.0.0"}`, `format: must be an integer, got string`},
		{"format float one", `{"format":1.0,"name":"a","version":"1.0.0"}`, ``},
		{"format huge", `{"format":1e400,"name":"a","version":"1.0.0"}`, `format: this manifest needs a newer extkernel (format 1e400, this build reads 1)`},
		{"format huge negative", `{"format":-1e400,"name":"a","version":"1.0.0"}`, `format: unsupported format -1e400 (this build reads format 1)`},
		{"format negative", `{"format":-1,"name":"a","version":"1.0.0"}`, `format: unsupported format -1 (this build reads format 1)`},
		{"priority exponent", rt(`"command":"a","priority":1e3`), ``},
		{"priority huge", rt(`"command":"a","priority":1e400`), `runtime.priority: must be between -1000 and 1000, got 1e400`},
		{"priority low", rt(`"command":"a","priority":-1001`), `runtime.priority: must be between -1000 and 1000, got -1001`},
		{"timeout negative", rt(`"command":"a","handshake_timeout":"-1s"`), `runtime.handshake_timeout: must be greater than 0, got "-1s"`},
		{"timeout max", rt(`"command":"a","handshake_timeout":"60s"`), ``},
		{"timeout just over", rt(`"command":"a","handshake_timeout":"60.001s"`), `runtime.handshake_timeout: must be at most 60s, got "60.001s"`},
		{"timeout type", rt(`"command":"a","handshake_timeout":5`), `runtime.handshake_timeout: must be a string, got number`},
		{"version metadata", `{"format":1,"name":"a","version":"1.2.3+"}`, `version: "1.2.3+" is not a valid semantic version: invalid metadata string`},
		{"version range", `{"format":1,"name":"a","version":"99999999999999999999.0.0"}`,
			`version: "99999999999999999999.0.0" is not a valid semantic version: number out of range`},
		{"version empty", `{"format":1,"name":"a","version":""}`, `version: must not be empty (use MAJOR.MINOR.PATCH such as "1.0.0")`},
		{"kernel empty", head + `,"kernel":" "}`, `kernel: must not be empty (use "*" for any version)`},
		{"requires version empty", head + `,"requires":[{"capability":"x","version":""}]}`, `requires[0].version: must not be empty (use "*" for any version)`},
		{"requires missing capability", head + `,"requires":[{"version":"*"}]}`, `requires[0].capability: required field is missing`},
		{"requires optional type", head + `,"requires":[{"capability":"x","optional":"yes"}]}`, `requires[0].optional: must be a boolean, got string`},
		{"methods type", methods(`["get"]`), `provides[0].methods: must be an object of strings, got array`},
		{"methods value type", methods(`{"get":1}`), `provides[0].methods.get: must be a string, got number`},
		{"methods bad ref", methods(`{"get":"kv/get"}`),
			`provides[0].methods.get: "kv/get" is not a valid provider ref: segment 1 ("kv/get") contains '/' (allowed: a-z, 0-9, '_', '-')`},
		{"methods dotted name", methods(`{"keys.list":"kv.list","get":"kv.get"}`), ``},
		{"methods duplicate", methods(`{"get":"a",` + "\n" + `"get":"b"}`), `provides[0].methods.get: duplicate key at line 2 (first at line 1)`},
		{"methods quoted bad name", methods(`{"get all":"a"}`),
			`provides[0].methods["get all"]: "get all" is not a valid method name: segment 1 ("get all") contains whitespace`},
		{"provides type", head + `,"provides":{"capability":"x"}}`, `provides: must be an array, got object`},
		{"provides element type", head + `,"provides":[null]}`, `provides[0]: must be an object, got null`},
		{"intercepts type", rt(`"command":"a","intercepts":"tool.before"`), `runtime.intercepts: must be an array of strings, got string`},
		{"point too long", rt(`"command":"a","intercepts":["` + strings.Repeat("a", 129) + `"]`),
			`runtime.intercepts[0]: "` + strings.Repeat("a", 129) + `" is not a valid point: longer than 128 bytes`},
		{"runtime type", head + `,"runtime":"./x"}`, `runtime: must be an object, got string`},
		{"schema ref type", head + `,"$schema":1}`, `$schema: must be a string, got number`},
		{"top-level scalar", `"x"`, `manifest must be a JSON object, got string`},
		{"whitespace only", " \n\t", `manifest is empty`},
		{"utf-8 column", "{\"name\":\"é\",\n \"é\":é}", `invalid JSON at line 2, column 6: invalid character 'é' looking for beginning of value`},
		{"duplicate in duplicate-free nested", head + `,"runtime":{"command":"a","command":"b"}}`, `runtime.command: duplicate key at line 1 (first at line 1)`},
		{"newer format hides other problems", `{"format":3,"name":"A","bogus":1}`, `format: this manifest needs a newer extkernel (format 3, this build reads 1)`},
		{"duplicate format key is not trusted for newer", `{"format":1,"format":9,"name":"a","version":"1.0.0"}`, `format: duplicate key at line 1 (first at line 1)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse("", []byte(tc.doc))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error:\n%v", err)
				}
				if err := m.Validate(); err != nil {
					t.Errorf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %s", tc.want)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("error:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestValidate covers Manifest.Validate on manifests built in code.
func TestValidate(t *testing.T) {
	v1 := semver.MustParse("1.0.0")
	any := anyVersion()
	valid := func() *Manifest {
		return &Manifest{Format: 1, Name: "a", Version: v1,
			Runtime:  &Runtime{Command: "./x", Intercepts: []contribution.Point{"p"}, Replaces: []contribution.Slot{"s"}},
			Provides: []capability.Provided{{Key: "k", Version: v1}},
			Requires: []capability.Requirement{{Key: "r", Constraint: any}},
		}
	}
	tests := []struct {
		name   string
		mutate func(m *Manifest)
		want   string
	}{
		{"valid", func(m *Manifest) {}, ""},
		{"zero", func(m *Manifest) { *m = Manifest{} }, lines(
			`format: unsupported format 0 (this build reads format 1)`,
			`name: must not be empty (use 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit)`,
			`version: required field is missing`)},
		{"runtime", func(m *Manifest) {
			m.Runtime = &Runtime{Command: "/x", Env: map[string]string{"B": "\x00", "EXTKERNEL_A": ""}, Priority: 2000,
				Intercepts: []contribution.Point{"p", "p"}, Replaces: []contribution.Slot{"S"}, HandshakeTimeout: time.Hour}
		}, lines(
			`runtime.command: "/x" is an absolute path; use a path relative to the package directory (such as "./bin/plugin") or a bare command name looked up on PATH`,
			`runtime.env.B: must not contain a NUL byte`,
			`runtime.env: "EXTKERNEL_A" is reserved: the kernel sets EXTKERNEL_* variables itself`,
			`runtime.priority: must be between -1000 and 1000, got 2000`,
			`runtime.intercepts[1]: duplicate point "p" (also at runtime.intercepts[0])`,
			`runtime.replaces[0]: "S" is not a valid slot: segment 1 ("S") contains an upper-case letter (identifiers are lower-case)`,
			`runtime.handshake_timeout: must be at most 60s, got "1h0m0s"`)},
		{"not utf-8", func(m *Manifest) {
			m.Description = "caf\xe9"
			m.Runtime = &Runtime{Command: "./caf\xe9", Args: []string{"ok", "\xff"}, Env: map[string]string{"A": "\xc3("}}
		}, lines(
			`description: is not valid UTF-8; a manifest must be UTF-8`,
			`runtime.command: is not valid UTF-8; a manifest must be UTF-8`,
			`runtime.args[1]: is not valid UTF-8; a manifest must be UTF-8`,
			`runtime.env.A: is not valid UTF-8; a manifest must be UTF-8`)},
		{"capabilities", func(m *Manifest) {
			m.Provides = append(m.Provides, capability.Provided{Key: "k"})
			m.Requires = append(m.Requires, capability.Requirement{Key: "k"}, capability.Requirement{Key: "r", Constraint: any})
		}, lines(
			`provides[1].capability: duplicate capability "k" (already provided by provides[0])`,
			`provides[1].version: required field is missing`,
			`requires[1].version: required field is missing`,
			`requires[2].capability: duplicate capability "r" (already required by requires[0])`,
			`requires[1].capability: "k" is provided by this package itself (provides[0]); a package cannot require its own capability`)},
		{"methods", func(m *Manifest) {
			m.Methods = map[capability.Key]map[string]string{"k": {"get": "kv.get"}}
		}, ""},
		{"methods broken", func(m *Manifest) {
			m.Methods = map[capability.Key]map[string]string{"k": {"Get": "kv.get", "put": "KV"}, "other": {"x": "y"}}
		}, lines(
			`provides[0].methods.Get: "Get" is not a valid method name: segment 1 ("Get") contains an upper-case letter (identifiers are lower-case)`,
			`provides[0].methods.put: "KV" is not a valid provider ref: segment 1 ("KV") contains an upper-case letter (identifiers are lower-case)`,
			`provides: methods of capability "other", which provides does not list`)},
		{"methods empty", func(m *Manifest) { m.Methods = map[capability.Key]map[string]string{"k": {}} },
			`provides[0].methods: must list at least one method (omit methods for a capability with no callable methods)`},
		{"methods without runtime", func(m *Manifest) {
			m.Runtime = nil
			m.Methods = map[capability.Key]map[string]string{"k": {"get": "kv.get"}}
		}, `provides[0].methods: a package without a runtime has no providers to implement methods`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			tc.mutate(m)
			err := m.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Validate:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestMarshalJSON(t *testing.T) {
	m, err := Parse("", []byte(`{"description":"d","version":"1.0.0","name":"a","format":1,
		"runtime":{"handshake_timeout":"45000ms","command":"./x","required":true},
		"requires":[{"capability":"b","version":">= 1.2, < 2"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "format": 1,
  "name": "a",
  "version": "1.0.0",
  "description": "d",
  "runtime": {
    "command": "./x",
    "required": true,
    "handshake_timeout": "45s"
  },
  "requires": [
    {
      "capability": "b",
      "version": "\u003e=1.2 \u003c2"
    }
  ]
}`
	if string(got) != want {
		t.Errorf("MarshalJSON:\n%s\nwant:\n%s", got, want)
	}
}
