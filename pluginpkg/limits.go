package pluginpkg

// ResourceLimits bound what a package's plugin may make the operating
// system and the host spend on it: the host decides them (package
// kernel/config reads them from kernel.json's "default_limits" and
// "limits"), package sidecar applies them. A zero field means its
// default, given on the field; the zero ResourceLimits is the defaults.
// docs/security.md lists every bound with its key.
type ResourceLimits struct {
	// OpenFiles bounds the number of open file descriptors
	// (RLIMIT_NOFILE); zero leaves the limit the plugin inherits from the
	// host. It is applied with prlimit(2) right after the process starts,
	// before the handshake, both soft and hard (the plugin cannot raise
	// it; its children inherit it), on Linux only: elsewhere a non-zero
	// value fails the plugin's start before anything runs.
	OpenFiles uint64
	// AddressSpace bounds the process's virtual memory, in bytes
	// (RLIMIT_AS), as OpenFiles is applied. A runtime that reserves
	// address space up front (Go, the JVM, V8) needs a few GiB of it.
	AddressSpace uint64
	// QueueBytes bounds the frames the host holds queued toward the
	// plugin, in bytes; zero means 4 MiB. Over it, a request of the host
	// waits for room and a call the plugin makes is refused at once; an
	// answer to the plugin's call past twice the bound is replaced by a
	// short error answer; a queue that stays saturated for 5s is a
	// plugin that reads too slowly, stopped as wedged.
	QueueBytes uint64
	// StreamWindowBytes bounds the chunk data the host holds for one
	// stream the plugin produces (docs/protocol.md §5.12, window_bytes);
	// zero means 1 MiB.
	StreamWindowBytes uint64
	// LogLinesPerSecond bounds the lines the host logs for the plugin:
	// its stderr, its log notifications and the host's own warnings about
	// what it sent, together, in bursts of twice as many; the lines over
	// it are counted and summed up in a periodic "N log lines
	// suppressed". Zero means 50.
	LogLinesPerSecond uint64
	// MalformedMessages bounds the malformed messages the host drops
	// (a notification whose params do not decode, an answer or chunk for
	// an id the host never sent, a chunk for a request that asked for no
	// stream): each counts up, each well-formed message counts down (not
	// below zero), and when the count reaches the bound the host stops
	// the plugin for breaking the protocol. Zero means 100.
	MalformedMessages uint64
}
