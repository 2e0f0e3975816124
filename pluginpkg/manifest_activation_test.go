package pluginpkg

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestActivation reads runtime.activation: the two values, the default,
// and a bad value or type refused with its field path by Parse, the
// schema and Validate alike; the canonical form keeps it.
func TestActivation(t *testing.T) {
	sch := compileSchema(t)
	tests := []struct {
		name, activation string // activation: the JSON value, "" for none
		want             string
		problem          string
	}{
		{name: "default", want: ""},
		{name: "eager", activation: `"eager"`, want: ActivationEager},
		{name: "lazy", activation: `"lazy"`, want: ActivationLazy},
		{name: "unknown", activation: `"later"`, problem: `runtime.activation: must be "eager" or "lazy", got "later"`},
		{name: "not a string", activation: `true`, problem: `runtime.activation: must be a string, got boolean`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			extra := ""
			if tt.activation != "" {
				extra = `, "activation": ` + tt.activation
			}
			data := []byte(`{"format": 1, "name": "tools", "version": "1.0.0", "runtime": {"command": "./tools"` + extra + `}}`)
			m, err := Parse("tools/plugin.json", data)
			schemaErr := schemaValidate(t, sch, data)
			if tt.problem != "" {
				var ve *ValidationError
				if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Field+": "+ve.Problems[0].Message != tt.problem {
					t.Fatalf("Parse = %v, want the one problem %q", err, tt.problem)
				}
				if schemaErr == nil {
					t.Error("the schema accepts it")
				}
				return
			}
			if err != nil || schemaErr != nil {
				t.Fatalf("Parse: %v; schema: %v", err, schemaErr)
			}
			if m.Runtime.Activation != tt.want {
				t.Errorf("Activation = %q, want %q", m.Runtime.Activation, tt.want)
			}
			out, _ := json.Marshal(m)
			if again, err := Parse("again", out); err != nil || again.Runtime.Activation != tt.want {
				t.Errorf("the canonical form %s parses to %v, %v", out, again, err)
			}
			m.Runtime.Activation = "sometimes"
			if err := m.Validate(); err == nil {
				t.Error("Validate accepts activation \"sometimes\"")
			}
		})
	}
}
