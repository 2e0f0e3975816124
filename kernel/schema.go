package kernel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/inputcheck"
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

// compiledSchema is one provider's schema, compiled once per generation.
type compiledSchema struct {
	once   sync.Once
	schema inputcheck.Schema // nil when the provider declared none
	err    error
}

// compileSchema compiles a provider's declared schema with the validator
// kernel/inputschema links in, or returns nil for none.
func compileSchema(text string) (inputcheck.Schema, error) {
	if text == "" {
		return nil, nil
	}
	compile := inputcheck.Lookup()
	if compile == nil { // config.Config.Validate refuses the option then
		return nil, fmt.Errorf("no JSON Schema validator is linked into this program (import _ %q)", inputcheck.Import)
	}
	return compile(text)
}

// providerSchema returns the compiled schema of provider c in the generation l,
// compiling it on first use. A schema that does not compile is reported once
// per generation, as a log warning and an observe.EventWarning.
func (k *Kernel) providerSchema(l *live, c contribution.Contribution) (inputcheck.Schema, error) {
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
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("null")
	}
	if r := schema.Check(input); r != nil {
		return &InputError{Plugin: c.Source.Plugin, Provider: c.Key, Pointer: r.Pointer, Message: r.Message}
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
