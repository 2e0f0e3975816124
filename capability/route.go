package capability

// Route is where one member's calls of one capability its manifest
// requires go in a published generation (capability/call,
// docs/protocol.md §5.11): the provider the capability closure chose for
// the requirement, as the kernel routes the calls (kernel.Kernel.Routes
// reports them). It is a copy: changing it changes no routing.
type Route struct {
	// Plugin is the calling member's package name.
	Plugin string
	// Requirement is the requirement of the member's manifest.
	Requirement Requirement
	// Provider serves the calls: a member's package name,
	// HostProvider for the host, or "" when the requirement is
	// optional and unsatisfied (calls are answered -32006).
	Provider string
	// Methods are the methods a plugin provider maps to its providers
	// (provides[].methods), sorted; a call of any other is answered
	// -32601. Nil for the host, whose handler decides, and for no
	// provider.
	Methods []string
	// Handled reports whether the host registered a Handler (the kernel's
	// config.Config.Handlers) when Provider is HostProvider; calls
	// to a host capability without one are answered -32006. False for every
	// other provider.
	Handled bool
}
