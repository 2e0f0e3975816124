//go:build !linux || extkernel_portable

package process

// awaitExit returns at once here: cmd.Wait blocks in wait(2).
func awaitExit(int) {}
