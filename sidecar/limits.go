package sidecar

import "github.com/extkernel/extkernel/internal/process"

// Limits are resource limits for a plugin process, applied to it with
// prlimit(2) right after it starts, before the handshake; Linux only (see
// the package documentation, "Platforms"). Each
// limit sets both the soft and the hard value, so the plugin cannot raise
// it again; its children inherit it. Zero leaves a limit as the plugin
// inherited it from the host.
type Limits struct {
	// OpenFiles bounds the number of open file descriptors
	// (RLIMIT_NOFILE).
	OpenFiles uint64
	// AddressSpace bounds the process's virtual memory, in bytes
	// (RLIMIT_AS). A runtime that reserves address space up front (Go,
	// the JVM, V8) needs a few GiB of it.
	AddressSpace uint64
}

func (l Limits) isZero() bool { return l == Limits{} }

// applyLimits applies Options.Limits to the started process.
func (c *Client) applyLimits() error {
	if c.opts.Limits.isZero() {
		return nil
	}
	return c.proc.SetLimits(process.Limits(c.opts.Limits))
}
