//go:build !linux && !darwin && !openbsd

package confine

import (
	"errors"
	"runtime"
)

// systemReadable, systemDevices and interpreterHome have nothing to say
// where nothing is enforced.
func systemReadable() []string      { return nil }
func systemDevices() []string       { return nil }
func interpreterHome(string) string { return "" }

// enforce records that this system enforces nothing.
func enforce(p *Policy, r *Report) {
	r.Mechanism = "none"
	r.NotEnforced = append(r.NotEnforced, "every rule: "+errUnsupported.Error())
}

// errUnsupported says why nothing is confined here.
var errUnsupported = errors.New("confinement is not implemented on " + runtime.GOOS +
	" (it is on Linux with Landlock and seccomp, on macOS with Seatbelt, on OpenBSD with unveil and pledge)")

// Start fails: nothing confines a plugin here.
func Start(*Policy, func() error) error {
	return &Error{Err: errUnsupported}
}

// Command returns path and args unchanged.
func Command(_ *Policy, path string, args []string) (string, []string) { return path, args }
