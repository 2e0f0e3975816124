package sidecar

import "fmt"

// Limits are resource limits for a plugin process, applied to it with
// prlimit(2) right after it starts, before the handshake; Linux only. Each
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
	l := c.opts.Limits
	if l.isZero() {
		return nil
	}
	for _, r := range []struct {
		name     string
		resource int
		value    uint64
	}{
		{"open files", rlimitNOFILE, l.OpenFiles},
		{"address space", rlimitAS, l.AddressSpace},
	} {
		if r.value == 0 {
			continue
		}
		if err := setLimit(c.pid, r.resource, r.value); err != nil {
			return fmt.Errorf("set %s limit to %d: %w", r.name, r.value, err)
		}
	}
	return nil
}
