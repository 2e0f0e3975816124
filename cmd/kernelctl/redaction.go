package main

import (
	"sync/atomic"

	"github.com/extkernel/extkernel/kernel/config"
)

// redaction is run's redaction of the plugin text it shows outside the
// kernel (a notify's data in the admin API's events): the config's
// Redactor, replaced when --watch applies a new config, as the kernel
// replaces its own.
type redaction struct {
	fn atomic.Pointer[func(string) string] // nil: no secret
}

func newRedaction(cfg config.Config) *redaction {
	r := &redaction{}
	r.set(cfg)
	return r
}

// set makes cfg's secrets the ones redacted.
func (r *redaction) set(cfg config.Config) {
	if fn := cfg.Redactor(); fn != nil {
		r.fn.Store(&fn)
	} else {
		r.fn.Store(nil)
	}
}

// redact is the current redaction of s.
func (r *redaction) redact(s string) string {
	if fn := r.fn.Load(); fn != nil {
		return (*fn)(s)
	}
	return s
}
