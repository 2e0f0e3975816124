//go:build !linux

package confine

import "errors"

// systemReadable, systemDevices and interpreterHome have nothing to say
// where nothing is enforced.
func systemReadable() []string      { return nil }
func systemDevices() []string       { return nil }
func interpreterHome(string) string { return "" }

// enforce records that this system enforces nothing.
func enforce(p *Policy, r *Report) {
	r.Mechanism = "none"
	r.NotEnforced = append(r.NotEnforced, "every rule: confinement is implemented on Linux only")
}

// Start fails: nothing confines a plugin here.
func Start(*Policy, func() error) error {
	return &Error{Err: errors.New("confinement is implemented on Linux only")}
}
