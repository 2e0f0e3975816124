package builder

import (
	"sync/atomic"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/parallel"
	"github.com/extkernel/extkernel/pluginpkg"
)

// fingerprintAhead computes every member's fingerprint
// (generation.Member.Fingerprint) in the background, from when the
// closure is resolved, while the build starts the members and builds the
// registry: generation.Assemble then finds them computed (or waits for
// those still under way) instead of making every file-system call after
// the rest of the build. A member started by the build takes its own
// fingerprint (or waits for it) just before its spawn (spec.member), so a
// generation records the files its processes were started from, not what
// they became during the start.
//
// It returns stop, which Build defers so that no goroutine outlives the
// build: after stop no member's fingerprint is begun, and stop returns
// when those begun are done (each is bounded by the package size limits).
// A lazy or declarative member's fingerprint reads no file: it is left to
// Assemble, and with no other member no goroutine is started.
func (b *build) fingerprintAhead() (stop func()) {
	var members []*generation.Member
	for _, name := range b.closure.Members { // sorted; b.members holds each
		m := b.members[name]
		if m != nil && m.Package.Manifest.Runtime != nil && b.in.LaunchOf(m.Package).Activation != pluginpkg.ActivationLazy {
			members = append(members, m)
		}
	}
	if len(members) == 0 {
		return func() {}
	}
	var stopped atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		parallel.For(len(members), parallel.FileWorkers, func(i int) {
			if !stopped.Load() {
				members[i].Fingerprint()
			}
		})
	}()
	return func() {
		stopped.Store(true)
		<-done
	}
}
