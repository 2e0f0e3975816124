package config

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/inputcheck"
	_ "github.com/extkernel/extkernel/kernel/inputschema" // validate_provider_input's validator
)

// TestParseTypeProblems holds the reading of kernel.json through its
// one schema: every value of the wrong type is reported at once with its
// line and column, wherever it is, and is not reported again by the check
// of its value.
func TestParseTypeProblems(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"two at once", "{\"format\": \"1\",\n \"strict\": 1, \"home\": \"h\"}",
			"k.json: format: must be an integer, got string (line 1, column 12)\n" +
				"k.json: strict: must be a boolean, got number (line 2, column 12)"},
		{"nested", `{"format": 1, "supervision": {"hang_timeout": 5, "crash_budget": "3"}, "deadlines": {"action": []}}`,
			"k.json: supervision.hang_timeout: must be a duration string such as \"5s\", got number (line 1, column 47)\n" +
				"k.json: supervision.crash_budget: must be an integer, got string (line 1, column 66)\n" +
				"k.json: deadlines.action: must be a duration string such as \"5s\", got array (line 1, column 96)"},
		{"array element", `{"format": 1, "capabilities": [3], "limits": {"m": {"open_files": 1.5}}}`,
			"k.json: capabilities[0]: must be an object, got number (line 1, column 32)\n" +
				"k.json: limits.m.open_files: must be an integer, got number (line 1, column 67)"},
		{"not an object", `[]`, "k.json: must be an object, got array (line 1, column 1)"},
		{"empty", " \n", "k.json: invalid JSON: the file is empty"},
		{"trailing data", `{"format": 1} x`, "k.json: invalid JSON at line 1, column 15: invalid character 'x' after top-level value"},
		{"unknown keys at every depth", `{"format": 1, "deadlines": {"inter": "1s"}, "supervision": {"budget": 1}, "limits": {"m": {"cpu": 1}}, "plugin_env": {"m": {"A": {"secret": true, "val": "x"}}}}`,
			"k.json: deadlines.inter: unknown key\nk.json: limits.m.cpu: unknown key\nk.json: plugin_env.m.A.val: unknown key\nk.json: supervision.budget: unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("k.json", []byte(tt.in))
			if err == nil || err.Error() != tt.want {
				t.Errorf("err =\n%v\nwant\n%s", err, tt.want)
			}
		})
	}
}

// TestParseDurations reads every duration key of the file.
func TestParseDurations(t *testing.T) {
	cfg, err := Parse("k.json", []byte(`{"format": 1, "startup_budget": "1m30s", "drain_timeout": "150ms",
		"deadlines": {"intercept": "1s", "strategy": "2s", "provider": "3s", "action": "4s"},
		"supervision": {"heartbeat_interval": "5s", "heartbeat_timeout": "6s", "hang_timeout": "7s", "crash_window": "8s",
		"backoff_min": "9ms", "backoff_max": "10s", "crash_budget": 2}, "handshake_timeout": "11s", "max_call_duration": "12m"}`))
	if err != nil {
		t.Fatal(err)
	}
	s := time.Second
	want := Config{StartupBudget: 90 * s, DrainTimeout: 150 * time.Millisecond, HandshakeTimeout: 11 * s, MaxCallDuration: 12 * time.Minute,
		Deadlines: Deadlines{Intercept: s, Strategy: 2 * s, Provider: 3 * s, Action: 4 * s},
		Supervision: Supervision{HeartbeatInterval: 5 * s, HeartbeatTimeout: 6 * s, HangTimeout: 7 * s, CrashWindow: 8 * s,
			BackoffMin: 9 * time.Millisecond, BackoffMax: 10 * s, CrashBudget: 2}}
	got := Config{StartupBudget: cfg.StartupBudget, DrainTimeout: cfg.DrainTimeout, HandshakeTimeout: cfg.HandshakeTimeout, MaxCallDuration: cfg.MaxCallDuration,
		Deadlines: cfg.Deadlines, Supervision: cfg.Supervision}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("durations = %+v, want %+v", got, want)
	}
}

// TestConfigSchemaMatchesDocs holds the schema and docs/config.md
// together: the documented example parses, and every key of the schema is
// in the example.
func TestConfigSchemaMatchesDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/config.md has no JSON example")
	}
	if _, err := Parse("docs/config.md", m[1]); err != nil {
		t.Errorf("the documented example does not parse: %v", err)
	}
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ.PkgPath() != reflect.TypeFor[fileConfig]().PkgPath() {
			return
		}
		for i := range typ.NumField() {
			key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if !strings.Contains(string(m[1]), `"`+key+`"`) {
				t.Errorf("key %s%s is not in the example of docs/config.md", prefix, key)
			}
			walk(prefix+key+".", typ.Field(i).Type)
		}
	}
	walk("", reflect.TypeFor[fileConfig]())
}

// TestParseEmbedderKeys reads the embedder keys of a config file.
func TestParseEmbedderKeys(t *testing.T) {
	cfg, err := Parse("/etc/ek/k.json", []byte(`{"format": 1, "home": "h", "handshake_timeout": "2s",
		"session": {"workspace": "/src"}, "data_root": "d", "validate_provider_input": true}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HandshakeTimeout != 2*time.Second || cfg.Session["workspace"] != "/src" || cfg.DataRoot != "/etc/ek/d" || !cfg.ValidateProviderInput {
		t.Errorf("cfg = %+v", cfg)
	}
	bad := []struct{ in, want string }{
		{`{"format": 1, "handshake_timeout": "2m"}`, `k.json: handshake_timeout: "2m" exceeds the maximum of 1m0s`},
		{`{"format": 1, "handshake_timeout": "0s"}`, `k.json: handshake_timeout: "0s" is not a positive duration such as "5s"`},
		{`{"format": 1, "session": {"user": 3}}`, `k.json: session.user: must be a string, got 3`},
		{`{"format": 1, "data_rot": "d"}`, `k.json: data_rot: unknown key`},
	}
	for _, tt := range bad {
		_, err := Parse("k.json", []byte(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%s) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// TestValidateProviderInputNeedsTheValidator checks that a program which
// does not link kernel/inputschema in refuses validate_provider_input,
// from a file and in a Config, rather than calling providers unchecked.
func TestValidateProviderInputNeedsTheValidator(t *testing.T) {
	if inputcheck.Lookup() == nil {
		t.Fatal("kernel/inputschema did not register its validator")
	}
	old := inputcheck.Swap(nil)
	t.Cleanup(func() { inputcheck.Swap(old) })
	want := `validate_provider_input: no JSON Schema validator is linked into this program: import _ "github.com/extkernel/extkernel/kernel/inputschema"`
	if _, err := Parse("k.json", []byte(`{"format": 1, "validate_provider_input": true}`)); err == nil || err.Error() != "k.json: "+want {
		t.Errorf("Parse = %v, want %q", err, "k.json: "+want)
	}
	if err := (Config{ValidateProviderInput: true}).Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate = %v, want %q", err, want)
	}
	if err := (Config{}).Validate(); err != nil {
		t.Errorf("Validate without the option = %v", err)
	}
}
