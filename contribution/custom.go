package contribution

// Custom is the payload of a plugin's contribution of a host-declared kind
// (a kind of HostSpec.Kinds beyond the built-in ones), as the plugin's
// handshake declared it (protocol 1.1, initialize's contributions). The
// registry does not read it; the host does, through Registry.OfKind and
// Registry.Get. It is an immutable value, shared by every lookup.
type Custom struct {
	// Title is a human-readable label for the host's UI; "" if none.
	Title string
	// Data is the kind-specific payload as raw JSON text, "" if none. It
	// is a string so that the registry can share it immutably.
	Data string
}
