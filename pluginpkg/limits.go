package pluginpkg

// ResourceLimits are resource limits for a package's plugin process. The host
// decides them (package kernel/config reads them from kernel.json's
// "limits"); package sidecar applies them with prlimit(2) right after the
// process starts, before the handshake, on Linux only: on other systems
// non-zero limits fail the plugin's start before anything runs. Each limit
// sets both the soft and the hard value, so the plugin cannot raise it
// again; its children inherit it. A zero field leaves that limit as the
// plugin inherited it from the host; the zero ResourceLimits changes nothing.
type ResourceLimits struct {
	// OpenFiles bounds the number of open file descriptors
	// (RLIMIT_NOFILE).
	OpenFiles uint64
	// AddressSpace bounds the process's virtual memory, in bytes
	// (RLIMIT_AS). A runtime that reserves address space up front (Go,
	// the JVM, V8) needs a few GiB of it.
	AddressSpace uint64
}
