//go:build !linux || extkernel_portable

package process

// GrowStdout does nothing where the pipe's size cannot be set (only Linux
// has F_SETPIPE_SZ): a stream's producer then waits for the host's reads
// more often, which is only slower. It reports false.
func (p *Process) GrowStdout(n int) bool { return false }
