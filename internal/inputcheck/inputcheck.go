// Package inputcheck is the seam between package kernel, which enforces a
// provider's declared input schema when config.Config.ValidateProviderInput
// is set, and package kernel/inputschema, which links a JSON Schema
// validator into the program and registers it here when the program
// starts.
//
// The kernel does not import the validator itself: the JSON Schema
// library compiles its meta-schemas when a program starts (about 7 ms and
// 1.7 MB of garbage on the machine BENCHMARKS.md names), a price only
// hosts that validate should pay. config.Config.Validate refuses
// ValidateProviderInput when nothing is registered.
//
// Invariant: Register is called from package initialisation only (once,
// by kernel/inputschema); Lookup may be called from any goroutine.
package inputcheck

import "sync/atomic"

// Import is the import path of the package that registers the validator,
// for the errors that ask a host to link it in.
const Import = "github.com/extkernel/extkernel/kernel/inputschema"

// Schema is one provider's compiled input schema. It is safe for
// concurrent use.
type Schema interface {
	// Check checks input, one JSON value, and returns nil when the schema
	// accepts it, or why not.
	Check(input []byte) *Refusal
}

// Refusal says where and why a schema refuses an input.
type Refusal struct {
	// Pointer is the JSON Pointer (RFC 6901) of the first value refused,
	// "" for the input as a whole.
	Pointer string
	// Message says what the schema requires there, or that the input is
	// not JSON.
	Message string
}

// Compiler compiles a schema's text (JSON Schema 2020-12 unless it names
// another draft with $schema). It must not read files or fetch URLs.
type Compiler func(text string) (Schema, error)

var registered atomic.Pointer[Compiler]

// Register makes c the program's compiler.
func Register(c Compiler) { registered.Store(&c) }

// Lookup returns the registered compiler, or nil when no package
// registered one.
func Lookup() Compiler {
	if p := registered.Load(); p != nil {
		return *p
	}
	return nil
}

// Swap registers c (nil: none) and returns the compiler it replaces, for
// tests of a program without a validator.
func Swap(c Compiler) Compiler {
	old := Lookup()
	if c == nil {
		registered.Store(nil)
	} else {
		Register(c)
	}
	return old
}
