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

// ProviderID returns the namespaced ID of a plugin's provider,
// "plugin/<plugin>/<ref>", the key Registry.Provider looks up. ref follows the
// dotted-identifier grammar (see ValidateProviderRef); plugin is the package
// name, which never contains '/'.
func ProviderID(plugin, ref string) string { return "plugin/" + plugin + "/" + ref }

// HostProviderID returns the ID of a provider the host registers itself,
// "host/<ref>".
func HostProviderID(ref string) string { return "host/" + ref }

// ActionID returns the namespaced ID of a plugin's UI action,
// "plugin/<plugin>/<id>", the key Registry.Get(KindAction, ...) looks up and
// the ID kernel.RunAction takes. id is the plugin-local action ID (see
// ValidateActionID), the one sent back to the plugin in action/run. Two
// plugins may declare the same local ID without conflict.
func ActionID(plugin, id string) string { return "plugin/" + plugin + "/" + id }

// HostActionID returns the ID of a UI action the host registers itself,
// "host/<id>".
func HostActionID(id string) string { return "host/" + id }

// ValidateProviderRef reports whether ref, a plugin-local provider reference,
// follows the dotted-identifier grammar (e.g. "search.web").
func ValidateProviderRef(ref string) error { return ident.ValidateDotted("provider ref", ref) }

// ValidateActionID reports whether id, a plugin-local UI action ID, follows
// the dotted-identifier grammar (e.g. "memory.open-panel").
func ValidateActionID(id string) error { return ident.ValidateDotted("action ID", id) }
