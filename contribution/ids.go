package contribution

import "github.com/extkernel/extkernel/internal/ident"

// Point names an interception point defined by the host, such as
// "tool.before". Its grammar is the dotted-identifier grammar documented in
// docs/manifest.md: lower-case segments of [a-z0-9_-] separated by dots,
// each starting with a letter or digit, at most 128 bytes.
type Point string

// Validate reports whether p follows the dotted-identifier grammar.
func (p Point) Validate() error { return ident.ValidateDotted("point", string(p)) }

// Slot names an exclusive strategy slot defined by the host, such as
// "context.compactor". It follows the same grammar as Point.
type Slot string

// Validate reports whether s follows the dotted-identifier grammar.
func (s Slot) Validate() error { return ident.ValidateDotted("slot", string(s)) }
