package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	_ "github.com/extkernel/extkernel/kernel/inputschema" // ValidateProviderInput's validator
	"github.com/extkernel/extkernel/kernel/observe"
)

// searchSchema is a small, realistic provider input schema.
const searchSchema = `{"type": "object", "required": ["q"], "additionalProperties": false,
	"properties": {"q": {"type": "string", "minLength": 1}, "limit": {"type": "integer", "minimum": 1, "maximum": 100}}}`

// schemaPlug declares providers with schemas: search (searchSchema),
// broken (does not compile), sneaky (refers to a schema file on the host,
// which would accept a string) and plain (no schema).
func schemaPlug(t testing.TB) plug {
	ref := filepath.Join(t.TempDir(), "string.json")
	if err := os.WriteFile(ref, []byte(`{"type": "string"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	schemas := fmt.Sprintf(`{"search": %s, "broken": {"type": "objec"}, "sneaky": {"$ref": "file://%s"}}`, searchSchema, ref)
	return plug{name: "finder", env: map[string]string{"SCRIPT_SCHEMAS": schemas, "SCRIPT_PROVIDERS": "plain"}}
}

// TestProviderInputValidation calls providers with valid and invalid
// input, with validation on and off. On: refused input is an *InputError
// and never reaches the plugin (its call count does not move); a schema
// that does not compile, or that refers to another document, refuses every
// call with a *PluginError wrapping ErrBadSchema and is reported once.
func TestProviderInputValidation(t *testing.T) {
	type want struct {
		calls   int64  // search's call count in the answer; 0: no answer
		pointer string // of an *InputError
		errText string // the error, when the call fails
		badSch  bool   // the error wraps ErrBadSchema
	}
	tests := []struct {
		name     string
		provider string
		input    string
		on, off  want
	}{
		{"valid", "search", `{"q": "go", "limit": 5}`, want{calls: 1}, want{calls: 1}},
		{"above maximum", "search", `{"q": "go", "limit": 500}`,
			want{pointer: "/limit", errText: `plugin "finder": provider "plugin/finder/search": input refused by its schema at "/limit": maximum: got 500, want 100`},
			want{calls: 2}},
		{"missing property", "search", `{"limit": 5}`,
			want{pointer: "", errText: `plugin "finder": provider "plugin/finder/search": input refused by its schema at "": missing property 'q'`},
			want{calls: 3}},
		{"absent input is null", "search", ``,
			want{pointer: "", errText: `plugin "finder": provider "plugin/finder/search": input refused by its schema at "": got null, want object`},
			want{calls: 4}},
		{"valid again", "search", `{"q": "x"}`, want{calls: 2}, want{calls: 5}},
		{"schema does not compile", "broken", `{}`,
			want{badSch: true, errText: `plugin "finder": provider "plugin/finder/broken": the provider's input schema does not compile`},
			want{calls: 1}},
		{"schema refers to a host file", "sneaky", `"text"`,
			want{badSch: true, errText: `a provider schema may only refer to itself`},
			want{calls: 1}},
		{"no schema", "plain", `{"anything": [1, 2]}`, want{}, want{}},
	}
	for _, on := range []bool{true, false} {
		cfg := testConfig(writeHome(t, schemaPlug(t)))
		cfg.ValidateProviderInput = on
		t.Run(fmt.Sprintf("validate=%v", on), func(t *testing.T) {
			k := startKernel(t, cfg)
			var warnings atomic.Int64
			t.Cleanup(k.Subscribe(func(e observe.Event) {
				if e.Type == observe.EventWarning && e.Plugin == "finder" {
					warnings.Add(1)
				}
			}))
			for _, tt := range tests {
				w := tt.off
				if on {
					w = tt.on
				}
				t.Run(tt.name, func(t *testing.T) {
					checkProviderCall(t, k, tt.provider, tt.input, w.calls, w.pointer, w.errText, w.badSch)
				})
			}
			if _, err := k.CallProvider(context.Background(), "plugin/finder/broken", nil); on && !errors.Is(err, ErrBadSchema) {
				t.Errorf("second call of broken: %v, want ErrBadSchema", err)
			}
			if want := map[bool]int64{true: 2, false: 0}[on]; warnings.Load() != want {
				t.Errorf("%d warnings about finder's schemas, want %d (broken and sneaky, once each per generation)", warnings.Load(), want)
			}
		})
	}
}

// checkProviderCall calls provider of finder with input and checks the
// outcome: search's call count, or the error.
func checkProviderCall(t *testing.T, k *Kernel, provider, input string, calls int64, pointer, errText string, badSchema bool) {
	t.Helper()
	out, err := k.CallProvider(context.Background(), "plugin/finder/"+provider, json.RawMessage(input))
	if errText == "" {
		if err != nil {
			t.Fatalf("CallProvider: %v", err)
		}
		var got struct{ Calls int64 }
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if provider != "plain" && got.Calls != calls {
			t.Errorf("the plugin counted %d calls, want %d", got.Calls, calls)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), errText) {
		t.Fatalf("CallProvider: %v; want an error containing %q", err, errText)
	}
	var ie *InputError
	var pe *PluginError
	switch {
	case badSchema:
		if !errors.Is(err, ErrBadSchema) || !errors.As(err, &pe) || pe.Plugin != "finder" {
			t.Errorf("err = %#v, want a *PluginError of finder wrapping ErrBadSchema", err)
		}
	case !errors.As(err, &ie) || ie.Pointer != pointer || ie.Plugin != "finder" || ie.Provider != "plugin/finder/"+provider:
		t.Errorf("err = %#v, want an *InputError of finder at %q", err, pointer)
	}
}

// TestSchemaValidatorNotLinked holds the kernel's imports free of the JSON
// Schema library: it compiles its meta-schemas when a program starts
// (~7 ms, 1.7 MB), which a host that never validates input should not
// pay; kernel/inputschema links it in for those that do.
func TestSchemaValidatorNotLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(pkg, "jsonschema") || pkg == "github.com/extkernel/extkernel/kernel/inputschema" {
			t.Errorf("package kernel depends on %s", pkg)
		}
	}
}
