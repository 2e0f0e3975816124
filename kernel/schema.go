package kernel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/kernel/observe"
)

// ErrBadSchema is wrapped by the *PluginError that refuses a call to a
// provider whose declared input schema does not compile, when
// config.Config.ValidateProviderInput is set: the plugin is not called.
var ErrBadSchema = errors.New("the provider's input schema does not compile")

// InputError reports provider input that the JSON Schema the provider
// declared refuses, when config.Config.ValidateProviderInput is set: the plugin
// was not called.
type InputError struct {
	Plugin string
	// Provider is the namespaced provider ID ("plugin/<name>/<ref>").
	Provider string
	// Pointer is the JSON Pointer (RFC 6901) of the first value the schema
	// refuses, "" for the input as a whole; absent input is checked as
	// null.
	Pointer string
	// Message says what the schema requires there, e.g. "missing property
	// 'query'" or "maximum: got 500, want 100".
	Message string
}

// Error names the plugin, the provider, the place in the input and the
// problem.
func (e *InputError) Error() string {
	return fmt.Sprintf("plugin %q: provider %q: input refused by its schema at %q: %s", e.Plugin, e.Provider, e.Pointer, e.Message)
}

// schemaURL names a provider's schema inside its own compiler, which loads
// nothing else.
const schemaURL = "extkernel://provider/schema.json"

// compiledSchema is one provider's schema, compiled once per generation.
type compiledSchema struct {
	once   sync.Once
	schema *jsonschema.Schema // nil when the provider declared none
	err    error
}

// noLoader refuses every reference to another document: a plugin's schema
// may not make the host read files or fetch URLs.
type noLoader struct{}

// Load refuses url.
func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: a provider schema may only refer to itself", url)
}

// compileSchema compiles a provider's declared schema (JSON Schema 2020-12
// unless it names another draft with $schema), or returns nil for none.
func compileSchema(text string) (*jsonschema.Schema, error) {
	if text == "" {
		return nil, nil
	}
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
	return c.Compile(schemaURL)
}

// providerSchema returns the compiled schema of provider c in the generation l,
// compiling it on first use. A schema that does not compile is reported once
// per generation, as a log warning and an observe.EventWarning.
func (k *Kernel) providerSchema(l *live, c contribution.Contribution) (*jsonschema.Schema, error) {
	v, ok := l.schemas.Load(c.Key)
	if !ok {
		v, _ = l.schemas.LoadOrStore(c.Key, new(compiledSchema))
	}
	cs := v.(*compiledSchema)
	cs.once.Do(func() {
		cs.schema, cs.err = compileSchema(c.Payload.(contribution.Provider).Schema)
		if cs.err == nil {
			return
		}
		cs.err = fmt.Errorf("%w: %s", ErrBadSchema, oneLine(cs.err.Error()))
		k.log.Warn("provider schema does not compile; calls to the provider are refused", "plugin", c.Source.Plugin,
			"provider", c.Key, "error", cs.err)
		k.events.emit(observe.Event{Type: observe.EventWarning, Generation: l.gen.Number(), Plugin: c.Source.Plugin,
			Message: fmt.Sprintf("plugin %q: provider %q: %v; calls to it are refused", c.Source.Plugin, c.Key, cs.err), Err: cs.err})
	})
	return cs.schema, cs.err
}

// checkInput validates input against the provider's schema, if it
// declared one: a refusal is an *InputError, a schema that does not
// compile a *PluginError wrapping ErrBadSchema.
func (k *Kernel) checkInput(l *live, c contribution.Contribution, input json.RawMessage) error {
	schema, err := k.providerSchema(l, c)
	if err != nil {
		m := l.gen.Member(c.Source.Plugin)
		return &PluginError{Plugin: c.Source.Plugin, Kind: contribution.KindProvider, Key: c.Key,
			Required: m != nil && m.Required, Err: err}
	}
	if schema == nil {
		return nil
	}
	refuse := func(pointer, msg string) error {
		return &InputError{Plugin: c.Source.Plugin, Provider: c.Key, Pointer: pointer, Message: msg}
	}
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("null")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return refuse("", fmt.Sprintf("not valid JSON: %v", err))
	}
	var ve *jsonschema.ValidationError
	if err := schema.Validate(v); errors.As(err, &ve) {
		for len(ve.Causes) > 0 {
			ve = ve.Causes[0]
		}
		out := ve.BasicOutput()
		msg := "refused"
		if out.Error != nil {
			msg = out.Error.String()
		}
		return refuse(out.InstanceLocation, msg)
	} else if err != nil {
		return refuse("", err.Error())
	}
	return nil
}

// oneLine joins the lines of a multi-line library message with "; ".
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = strings.TrimLeft(strings.TrimSpace(l), "- "); l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}
