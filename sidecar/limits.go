package sidecar

// applyLimits applies Options.Limits to the started process.
func (c *Client) applyLimits() error {
	l := c.opts.Limits
	if l.OpenFiles == 0 && l.AddressSpace == 0 {
		return nil
	}
	return c.proc.SetLimits(l.OpenFiles, l.AddressSpace)
}
