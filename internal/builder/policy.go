package builder

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/sidecar"
)

// cascade is where the build applies the failure policy. It fails, along
// requires edges, every member whose non-optional requirement's chosen
// provider failed (capability.Closure.Cascade), then applies required/optional to
// every failure: a failed required member fails the build (cascade returns
// false, the stopping left to fail); a failed optional member becomes
// StatusFailed with a warning, and its sidecar, if this build started it,
// is stopped and reported failed again. Build calls it after each step that
// can add failures: resolution, the start, each isolation round. Each
// member is handled once.
func (b *build) cascade(ctx context.Context) bool {
	for _, name := range b.closure.Cascade(b.failed) {
		b.consequence[name] = true
	}
	if !b.checkRequired() {
		return false
	}
	var stop []*sidecar.Client
	var slots []*Lazy
	for _, name := range slices.Sorted(maps.Keys(b.failed)) {
		m := b.members[name]
		if m.Status == generation.StatusFailed {
			continue
		}
		m.Status, m.Reason = generation.StatusFailed, b.failed[name]
		b.warnings = append(b.warnings, b.failureWarning(name))
		if c := b.clients[name]; c != nil && !m.Adopted {
			// Reported ready by its start: say it is gone again.
			b.report(Event{Plugin: name, State: Failed, Err: errors.New(m.Reason)})
			stop = append(stop, c)
			b.started = slices.DeleteFunc(b.started, func(x *sidecar.Client) bool { return x == c })
		}
		delete(b.clients, name)
		if z := b.lazy[name]; z != nil {
			delete(b.lazy, name)
			if i := slices.Index(b.created, z); i >= 0 {
				b.created = slices.Delete(b.created, i, i+1)
				slots = append(slots, z)
			}
		}
	}
	if err := errors.Join(CloseAll(context.WithoutCancel(ctx), stop), closeSlots(context.WithoutCancel(ctx), slots)); err != nil {
		b.warnings = append(b.warnings, "stopping failed optional plugins: "+err.Error())
	}
	return true
}

// checkRequired turns every failed required member into a problem, a
// consequence when it failed because another did, and reports whether the
// build may go on.
func (b *build) checkRequired() bool {
	for _, name := range slices.Sorted(maps.Keys(b.failed)) {
		if !b.members[name].Required {
			continue
		}
		msg := fmt.Sprintf("required plugin %q failed: %s", name, b.failed[name])
		switch {
		case b.aborted[name]:
			b.consequences = append(b.consequences, fmt.Sprintf("required plugin %q %s", name, b.failed[name]))
		case b.consequence[name]:
			b.consequences = append(b.consequences, msg)
		default:
			b.problems = append(b.problems, msg)
		}
	}
	return len(b.problems)+len(b.consequences) == 0
}
