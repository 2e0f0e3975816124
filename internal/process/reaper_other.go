//go:build !linux || extkernel_portable

package process

import "github.com/hashicorp/go-hclog"

// reaperAdd does nothing here: there is no reaper, and a plugin's own
// children can outlive a host killed with SIGKILL.
func reaperAdd(int, hclog.Logger) {}

// reaperRemove does nothing here.
func reaperRemove(int) {}

// ReaperPID returns 0 here: there is no reaper.
func ReaperPID() int { return 0 }
