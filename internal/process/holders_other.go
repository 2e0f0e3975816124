//go:build !linux || extkernel_portable

package process

import "time"

// killPipeHolders does nothing here, where there is no /proc to find the
// processes that hold a plugin's pipes: a helper that left the plugin's
// process group and keeps them open is not killed, and the client closes
// its ends after its drain timeout.
func killPipeHolders([]uint64, time.Duration) []int { return nil }
