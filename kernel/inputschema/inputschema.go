// Package inputschema links a JSON Schema validator into a host, for
// config.Config.ValidateProviderInput (config key validate_provider_input):
// with it, kernel.Kernel.CallProvider and CallProviderStream check their
// input against the JSON Schema the provider declared before the plugin is
// called. A host that sets the option imports this package for its effect:
//
//	import _ "github.com/extkernel/extkernel/kernel/inputschema"
//
// and config.Config.Validate (so kernel.New, Reconfigure and a config
// file's Parse) refuses the option in a program that does not link it.
//
// The validator is github.com/santhosh-tekuri/jsonschema/v6, which
// compiles its meta-schemas when the program starts (about 7 ms and 1.7 MB
// of garbage; BENCHMARKS.md, "Host start"): a host that never validates
// does not link it and does not pay that.
//
// A schema is JSON Schema 2020-12 unless it names another draft with
// $schema, and may refer only to itself: a reference to a file or a URL
// does not compile, so a plugin's schema cannot make the host read files
// or fetch URLs.
package inputschema

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/extkernel/extkernel/internal/inputcheck"
)

func init() { inputcheck.Register(compile) }

// schemaURL names a provider's schema inside its own compiler, which loads
// nothing else.
const schemaURL = "extkernel://provider/schema.json"

// noLoader refuses every reference to another document.
type noLoader struct{}

// Load refuses url.
func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: a provider schema may only refer to itself", url)
}

// compile compiles a provider's declared schema.
func compile(text string) (inputcheck.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, err
	}
	return schema{s}, nil
}

// schema is a compiled schema.
type schema struct{ s *jsonschema.Schema }

// Check validates input and reports the innermost cause of a refusal.
func (s schema) Check(input []byte) *inputcheck.Refusal {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return &inputcheck.Refusal{Message: fmt.Sprintf("not valid JSON: %v", err)}
	}
	var ve *jsonschema.ValidationError
	if err := s.s.Validate(v); errors.As(err, &ve) {
		for len(ve.Causes) > 0 {
			ve = ve.Causes[0]
		}
		out := ve.BasicOutput()
		msg := "refused"
		if out.Error != nil {
			msg = out.Error.String()
		}
		return &inputcheck.Refusal{Pointer: out.InstanceLocation, Message: msg}
	} else if err != nil {
		return &inputcheck.Refusal{Message: err.Error()}
	}
	return nil
}
