package generation

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/sidecar"
)

// cascade is where the build applies the failure policy. It fails, along
// requires edges, every member whose non-optional requirement's chosen
// provider failed (cascadeFailures), then applies required/optional to
// every failure: a failed required member fails the build (cascade returns
// false, the stopping left to fail); a failed optional member becomes
// StatusFailed with a warning, and its sidecar, if this build started it,
// is stopped and reported failed again. Build calls it after each step that
// can add failures: resolution, the start, each isolation round. Each
// member is handled once.
func (b *build) cascade(ctx context.Context) bool {
	for _, name := range cascadeFailures(b.closure, b.failed) {
		b.consequence[name] = true
	}
	if !b.checkRequired() {
		return false
	}
	var stop []*sidecar.Client
	for _, name := range slices.Sorted(maps.Keys(b.failed)) {
		m := b.members[name]
		if m.Status == StatusFailed {
			continue
		}
		m.Status, m.Reason = StatusFailed, b.failed[name]
		b.warnings = append(b.warnings, b.failureWarning(name))
		if c := m.client(); c != nil && !m.Adopted {
			// Reported ready by its start: say it is gone again.
			b.report(StartEvent{Plugin: name, State: StartFailed, Err: errors.New(m.Reason)})
			stop = append(stop, c)
			b.started = remove(b.started, c)
		}
		m.setClient(nil)
	}
	if err := sidecar.CloseAll(context.WithoutCancel(ctx), stop); err != nil {
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

// cascadeFailures adds to failed every member of cl whose non-optional
// requirement's chosen provider failed, transitively, each with the chain
// in its reason, and returns the names it added. It is the one
// implementation of the cascade: builds and plans both use it.
func cascadeFailures(cl *capability.Closure, failed map[string]string) []string {
	dependents := map[string][]capability.Choice{}
	for _, c := range cl.Choices {
		if !c.Requirement.Optional && c.Provider != capability.HostProvider {
			dependents[c.Provider] = append(dependents[c.Provider], c)
		}
	}
	var added []string
	queue := slices.Sorted(maps.Keys(failed))
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		for _, c := range dependents[name] {
			if _, done := failed[c.Package]; done {
				continue
			}
			failed[c.Package] = fmt.Sprintf("requires %s %s, provided by %q, which failed: %s",
				c.Requirement.Key, c.Requirement.Constraint, name, failed[name])
			added = append(added, c.Package)
			queue = append(queue, c.Package)
		}
	}
	return added
}
