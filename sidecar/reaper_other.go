//go:build !linux

package sidecar

import "github.com/hashicorp/go-hclog"

// reaperAdd does nothing outside Linux: there is no reaper, and a plugin's
// own children can outlive a host killed with SIGKILL.
func reaperAdd(int, hclog.Logger) {}

// reaperRemove does nothing outside Linux.
func reaperRemove(int) {}

// reaperPID returns 0 outside Linux.
func reaperPID() int { return 0 }
