package protocol

import "encoding/json"

// ContributionDecl declares a contribution of a kind the host declares
// beyond the four built-in ones (protocol 1.1, docs/protocol.md §4.2), such
// as a "tool". The manifest's runtime.contributes must list Key under Kind.
type ContributionDecl struct {
	// Kind is one of the host's declared kinds (an identifier).
	Kind string `json:"kind"`
	// Key is what the contribution is known by (an identifier): for a kind
	// whose target is a point or a slot, that point or slot; otherwise a
	// name of the plugin's choosing, the same for every plugin (keys are
	// not namespaced by plugin: the kind's policy settles a clash).
	Key string `json:"key"`
	// Priority orders the contributions of an ordered kind at one key
	// (higher first, within [-1000, 1000]); nil means the manifest's
	// runtime.priority. Other policies ignore it.
	Priority *int `json:"priority,omitempty"`
	// Title is a human-readable label, for the host's UI.
	Title string `json:"title,omitempty"`
	// Data is the kind-specific payload the host reads (a tool's input
	// schema, a theme's colours); the kernel does not interpret it.
	Data json.RawMessage `json:"data,omitempty"`
}
