package pluginpkg

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
)

// manifestsDir holds the shared example manifests (repository testdata).
const manifestsDir = "../testdata/manifests"

// schemaVerdict says what docs/manifest.schema.json makes of a broken
// manifest.
type schemaVerdict int

const (
	// schema: the schema rejects it too.
	schema schemaVerdict = iota
	// parseOnly: the rule cannot be expressed in JSON Schema (cross-field
	// checks, semver constraint grammar, duplicate JSON keys, path
	// cleaning, duration ranges); the schema accepts the document.
	parseOnly
	// syntax: not JSON at all; the schema never sees it.
	syntax
)

// brokenManifests lists every testdata/manifests/broken/<rule> case with the
// exact error Parse must return (path given as "<rule>/plugin.json").
var brokenManifests = []struct {
	rule   string
	schema schemaVerdict
	want   string
}{
	{rule: "absolute-command", schema: schema, want: `absolute-command/plugin.json: runtime.command: "/usr/local/bin/plugin" is an absolute path; use a path relative to the package directory (such as "./bin/plugin") or a bare command name looked up on PATH`},
	{rule: "bad-capability-key", schema: schema, want: `bad-capability-key/plugin.json: provides[0].capability: "Storage.KV" is not a valid capability key: segment 1 ("Storage") contains an upper-case letter (identifiers are lower-case)`},
	{rule: "bad-connect-address", schema: schema, want: `bad-connect-address/plugin.json: permissions.net.connect[0]: "api.example.com": must be "host:port": missing port in address`},
	{rule: "bad-env-key", schema: schema, want: `bad-env-key/plugin.json: runtime.env: "1ST-LEVEL" is not a valid environment variable name (use letters, digits and '_', not starting with a digit)`},
	{rule: "bad-exec", schema: schema, want: `bad-exec/plugin.json: permissions.exec[0]: "sh -c": command name "sh -c" may hold only letters, digits and . _ + -`},
	{rule: "bad-format", schema: schema, want: `bad-format/plugin.json: format: unsupported format 0 (this build reads format 1)`},
	{rule: "bad-handshake-timeout", schema: schema, want: `bad-handshake-timeout/plugin.json: runtime.handshake_timeout: "5 seconds" is not a valid duration (use Go syntax such as "5s" or "1m30s")`},
	{rule: "bad-kernel", schema: parseOnly, want: `bad-kernel/plugin.json: kernel: ">= one" is not a valid semver constraint`},
	{rule: "bad-method-name", schema: schema, want: `bad-method-name/plugin.json: provides[0].methods.Put: "Put" is not a valid method name: segment 1 ("Put") contains an upper-case letter (identifiers are lower-case)`},
	{rule: "bad-name", schema: schema, want: `bad-name/plugin.json: name: "My Plugin" is not a valid package name (use 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit)`},
	{rule: "bad-platform", schema: schema, want: `bad-platform/plugin.json: runtime.platforms["linux/x86_64"]: platform "linux/x86_64": unknown arch "x86_64"`},
	{rule: "bad-point", schema: schema, want: `bad-point/plugin.json: runtime.intercepts[1]: "Tool.After" is not a valid point: segment 1 ("Tool") contains an upper-case letter (identifiers are lower-case)`},
	{rule: "bad-provide-version", schema: schema, want: `bad-provide-version/plugin.json: provides[0].version: "v1.0.0" is not a valid semantic version: drop the leading "v"`},
	{rule: "bad-requires-constraint", schema: parseOnly, want: `bad-requires-constraint/plugin.json: requires[1].version: "~2.x.y" is not a valid semver constraint`},
	{rule: "bad-slot", schema: schema, want: `bad-slot/plugin.json: runtime.replaces[0]: "context..compactor" is not a valid slot: segment 2 ("") is empty`},
	{rule: "bad-version", schema: schema, want: `bad-version/plugin.json: version: "1.2" is not a valid semantic version: use MAJOR.MINOR.PATCH such as "1.0.0"`},
	{rule: "byte-order-mark", schema: syntax, want: `byte-order-mark/plugin.json: starts with a UTF-8 byte-order mark; remove it`},
	{rule: "duplicate-key", schema: parseOnly, want: `duplicate-key/plugin.json: name: duplicate key at line 5 (first at line 3)`},
	{rule: "duplicate-permission", schema: schema, want: `duplicate-permission/plugin.json: permissions.net.connect[1]: duplicate entry "*:443" (already at [0])`},
	{rule: "duplicate-point", schema: schema, want: `duplicate-point/plugin.json: runtime.intercepts[2]: duplicate point "tool.before" (also at runtime.intercepts[0])`},
	{rule: "duplicate-provide", schema: parseOnly, want: `duplicate-provide/plugin.json: provides[1].capability: duplicate capability "storage.kv" (already provided by provides[0])`},
	{rule: "duplicate-require", schema: parseOnly, want: `duplicate-require/plugin.json: requires[1].capability: duplicate capability "storage.kv" (already required by requires[0])`},
	{rule: "duplicate-slot", schema: schema, want: `duplicate-slot/plugin.json: runtime.replaces[1]: duplicate slot "context.compactor" (also at runtime.replaces[0])`},
	{rule: "empty-command", schema: schema, want: `empty-command/plugin.json: runtime.command: must not be empty`},
	{rule: "empty-file", schema: syntax, want: `empty-file/plugin.json: manifest is empty`},
	{rule: "empty-methods", schema: schema, want: `empty-methods/plugin.json: provides[0].methods: must list at least one method (omit methods for a capability with no callable methods)`},
	{rule: "escaping-command", schema: parseOnly, want: `escaping-command/plugin.json: runtime.command: "./bin/../../other/plugin" escapes the package directory`},
	{rule: "format-not-integer", schema: schema, want: `format-not-integer/plugin.json: format: must be an integer, got 1.5`},
	{rule: "handshake-timeout-too-long", schema: parseOnly, want: `handshake-timeout-too-long/plugin.json: runtime.handshake_timeout: must be at most 60s, got "2m"`},
	{rule: "handshake-timeout-zero", schema: parseOnly, want: `handshake-timeout-zero/plugin.json: runtime.handshake_timeout: must be greater than 0, got "0s"`},
	{rule: "invalid-json", schema: syntax, want: `invalid-json/plugin.json: invalid JSON at line 5, column 1: invalid character '}' looking for beginning of object key string`},
	{rule: "many-problems", schema: schema, want: lines(
		`many-problems/plugin.json: name: "Many_Problems" is not a valid package name (use 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit)`,
		`many-problems/plugin.json: version: "01.0.0" is not a valid semantic version: version segment starts with 0`,
		`many-problems/plugin.json: runtime.command: "../escape" escapes the package directory`,
		`many-problems/plugin.json: runtime.env: "EXTKERNEL_HOME" is reserved: the kernel sets EXTKERNEL_* variables itself`,
		`many-problems/plugin.json: runtime.env.OK: must be a string, got number`,
		`many-problems/plugin.json: runtime.priority: must be between -1000 and 1000, got -2000`,
		`many-problems/plugin.json: runtime.intercepts[1]: duplicate point "tool.before" (also at runtime.intercepts[0])`,
		`many-problems/plugin.json: runtime.handshake_timeout: "forever" is not a valid duration (use Go syntax such as "5s" or "1m30s")`,
		`many-problems/plugin.json: runtime.restart: unknown field`,
		`many-problems/plugin.json: provides[1].capability: duplicate capability "cache" (already provided by provides[0])`,
		`many-problems/plugin.json: provides[1].version: "1.0" is not a valid semantic version: use MAJOR.MINOR.PATCH such as "1.0.0"`,
		`many-problems/plugin.json: requires[1].version: "~~1" is not a valid semver constraint`,
		`many-problems/plugin.json: requires[1].optinal: unknown field (did you mean "optional"?)`,
		`many-problems/plugin.json: requires[2]: must be an object, got string`,
		`many-problems/plugin.json: kernel: must be a string, got number`,
		`many-problems/plugin.json: requires[0].capability: "cache" is provided by this package itself (provides[0]); a package cannot require its own capability`,
	)},
	{rule: "methods-without-runtime", schema: schema, want: `methods-without-runtime/plugin.json: provides[0].methods: a package without a runtime has no providers to implement methods`},
	{rule: "missing-command", schema: schema, want: `missing-command/plugin.json: runtime.command: required field is missing`},
	{rule: "missing-format", schema: schema, want: `missing-format/plugin.json: format: required field is missing`},
	{rule: "missing-name", schema: schema, want: `missing-name/plugin.json: name: required field is missing`},
	{rule: "missing-provide-version", schema: schema, want: `missing-provide-version/plugin.json: provides[0].version: required field is missing`},
	{rule: "missing-version", schema: schema, want: `missing-version/plugin.json: version: required field is missing`},
	{rule: "newer-format", schema: schema, want: `newer-format/plugin.json: format: this manifest needs a newer extkernel (format 2, this build reads 1)`},
	{rule: "not-an-object", schema: schema, want: `not-an-object/plugin.json: manifest must be a JSON object, got array`},
	// encoding/json reads the invalid bytes as U+FFFD: the schema rejects
	// the key only because "CAF\uFFFD" is not a valid variable name.
	{rule: "not-utf8-key", schema: schema, want: `not-utf8-key/plugin.json: runtime.env["CAF\xc9"]: key contains a byte that is not UTF-8 (0xc9 at line 7, column 17); a manifest must be UTF-8`},
	{rule: "not-utf8-value", schema: parseOnly, want: `not-utf8-value/plugin.json: description: contains a byte that is not UTF-8 (0xe9 at line 5, column 22); a manifest must be UTF-8`},
	{rule: "null-value", schema: schema, want: `null-value/plugin.json: description: must be a string, got null`},
	{rule: "permissions-without-runtime", schema: schema, want: `permissions-without-runtime/plugin.json: permissions: a package without a runtime has no process to confine`},
	{rule: "priority-not-integer", schema: schema, want: `priority-not-integer/plugin.json: runtime.priority: must be an integer, got 2.5`},
	{rule: "priority-out-of-range", schema: schema, want: `priority-out-of-range/plugin.json: runtime.priority: must be between -1000 and 1000, got 5000`},
	{rule: "relative-permission-path", schema: schema, want: `relative-permission-path/plugin.json: permissions.fs.read[1]: "home/u/.ssh": must be absolute or start with one of ${package}, ${data}, ${workspace}, ${tmp}`},
	{rule: "reserved-env-key", schema: schema, want: `reserved-env-key/plugin.json: runtime.env: "EXTKERNEL_PROTOCOL" is reserved: the kernel sets EXTKERNEL_* variables itself`},
	{rule: "self-requirement", schema: parseOnly, want: `self-requirement/plugin.json: requires[0].capability: "storage.kv" is provided by this package itself (provides[0]); a package cannot require its own capability`},
	{rule: "trailing-data", schema: syntax, want: `trailing-data/plugin.json: invalid JSON at line 2, column 1: invalid character '{' after top-level value`},
	{rule: "truncated-json", schema: syntax, want: `truncated-json/plugin.json: invalid JSON at line 4, column 1: unexpected end of JSON input`},
	{rule: "unclean-permission-path", schema: schema, want: `unclean-permission-path/plugin.json: permissions.fs.read[0]: "${data}/../other": must not contain a ".." element`},
	{rule: "unknown-field", schema: schema, want: lines(
		`unknown-field/plugin.json: runtime.comand: unknown field (did you mean "command"?)`,
		`unknown-field/plugin.json: runtime.command: required field is missing`,
		`unknown-field/plugin.json: homepage: unknown field`,
	)},
	{rule: "unknown-permission-variable", schema: schema, want: `unknown-permission-variable/plugin.json: permissions.fs.write[0]: "${home}/.cache": unknown variable "${home}" (known: ${package}, ${data}, ${workspace}, ${tmp})`},
	{rule: "wrong-type", schema: schema, want: `wrong-type/plugin.json: runtime.priority: must be an integer, got string`},
}

func lines(ls ...string) string { return strings.Join(ls, "\n") }

func readManifestFile(t testing.TB, dir string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseBroken(t *testing.T) {
	for _, tc := range brokenManifests {
		t.Run(tc.rule, func(t *testing.T) {
			path := tc.rule + "/plugin.json"
			data := readManifestFile(t, filepath.Join(manifestsDir, "broken", tc.rule))
			m, err := Parse(path, data)
			if m != nil {
				t.Errorf("Parse returned a manifest with error %v", err)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Parse error = %T %v, want *ValidationError", err, err)
			}
			if ve.Path != path || len(ve.Problems) == 0 {
				t.Errorf("ValidationError{Path: %q, %d problems}", ve.Path, len(ve.Problems))
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("error text:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestBrokenManifestsListed keeps the table and testdata in step: every
// broken manifest directory has a table entry and the reverse.
func TestBrokenManifestsListed(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join(manifestsDir, "broken"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk, inTable []string
	for _, d := range dirs {
		onDisk = append(onDisk, d.Name())
	}
	for _, tc := range brokenManifests {
		inTable = append(inTable, tc.rule)
	}
	if !reflect.DeepEqual(onDisk, inTable) {
		t.Errorf("broken manifests on disk:\n%v\nin table (must be the same, sorted):\n%v", onDisk, inTable)
	}
}

func TestParseValid(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(manifestsDir, "valid", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no valid manifests: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			m, err := Parse(dir, readManifestFile(t, dir))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if err := m.Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			if m.Name == "" || m.Version == nil || m.Format != FormatVersion {
				t.Errorf("incomplete manifest %+v", m)
			}
		})
	}
}

// TestParseRedactor checks every field of the full example.
func TestParseRedactor(t *testing.T) {
	dir := filepath.Join(manifestsDir, "valid", "redactor")
	m, err := Parse(dir, readManifestFile(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	got := summarize(m)
	want := map[string]any{
		"format": 1, "name": "redactor", "version": "1.4.2-beta.1+build.7",
		"description": "Redacts secrets from tool output before the model sees it.",
		"command":     "./bin/redactor", "args": []string{"--mode", "strict"},
		"env":      map[string]string{"REDACTOR_LEVEL": "high", "_DEBUG": ""},
		"required": true, "priority": -50,
		"intercepts": []contribution.Point{"tool.after", "model.request"},
		"replaces":   []contribution.Slot{"context.compactor"},
		"handshake":  10 * time.Second,
		"provides":   []string{"security.redact@1.4.2", "security.redact.patterns@1.0.0"},
		"requires":   []string{"storage.kv ^1.2", "telemetry 1.x || 2.x (optional)", "host.fs *"},
		"kernel":     ">=1.0.0, <2.0.0",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("manifest:\n%v\nwant:\n%v", got, want)
	}
}

func summarize(m *Manifest) map[string]any {
	s := map[string]any{
		"format": m.Format, "name": m.Name, "version": m.Version.Original(),
		"description": m.Description, "kernel": m.KernelText,
	}
	if rt := m.Runtime; rt != nil {
		s["command"], s["args"], s["env"] = rt.Command, rt.Args, rt.Env
		s["required"], s["priority"], s["handshake"] = rt.Required, rt.Priority, rt.HandshakeTimeout
		s["intercepts"], s["replaces"] = rt.Intercepts, rt.Replaces
	}
	var provides, requires []string
	for _, p := range m.Provides {
		provides = append(provides, string(p.Key)+"@"+p.Version.Original())
	}
	for _, r := range m.Requires {
		req := string(r.Key) + " " + r.Constraint.String()
		if r.Optional {
			req += " (optional)"
		}
		requires = append(requires, req)
	}
	s["provides"], s["requires"] = provides, requires
	return s
}

// TestParseMethods checks provides[].methods of the kvstore example: one
// table per capability that lists methods, none for the others.
func TestParseMethods(t *testing.T) {
	dir := filepath.Join(manifestsDir, "valid", "kvstore")
	m, err := Parse(dir, readManifestFile(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	want := map[capability.Key]map[string]string{
		"storage.kv": {"get": "kv.get", "put": "kv.put", "list-keys": "kv.list"},
	}
	if !reflect.DeepEqual(m.Methods, want) {
		t.Errorf("Methods = %v, want %v", m.Methods, want)
	}
	data, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("round trip", data)
	if err != nil {
		t.Fatalf("Parse(MarshalJSON()): %v\n%s", err, data)
	}
	if !reflect.DeepEqual(back.Methods, want) {
		t.Errorf("round trip Methods = %v, want %v", back.Methods, want)
	}
}

// TestParseDefaults checks the zero values of a declarative manifest and a
// minimal runtime.
func TestParseDefaults(t *testing.T) {
	m, err := Parse("x", []byte(`{"format":1,"name":"x","version":"1.0.0","runtime":{"command":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Runtime{Command: "x"}
	if !reflect.DeepEqual(m.Runtime, want) {
		t.Errorf("runtime = %+v, want %+v", m.Runtime, want)
	}
	if m.Kernel != nil || m.Provides != nil || m.Requires != nil || m.Methods != nil || m.Description != "" {
		t.Errorf("unexpected non-zero fields: %+v", m)
	}
	m, err = Parse("x", []byte(`{"format":1,"name":"x","version":"1.0.0","requires":[{"capability":"a"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Runtime != nil || len(m.Requires) != 1 || m.Requires[0].Constraint.String() != "*" {
		t.Errorf("declarative manifest: runtime %v, requires %+v", m.Runtime, m.Requires)
	}
}
