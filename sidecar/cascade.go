package sidecar

import (
	"context"
	"fmt"

	"github.com/extkernel/extkernel/capability"
)

// DependencyError reports that a plugin was failed because the plugin
// providing a capability it requires failed to start.
type DependencyError struct {
	Plugin     string
	Capability capability.Key
	Provider   string
	// Err is the provider's own failure.
	Err error
}

// Error names the plugin, the capability and the provider, then the
// provider's failure.
func (e *DependencyError) Error() string {
	return fmt.Sprintf("plugin %q requires capability %q, but its provider %q failed to start: %v",
		e.Plugin, e.Capability, e.Provider, e.Err)
}

// Unwrap returns the provider's failure.
func (e *DependencyError) Unwrap() error { return e.Err }

// cascade fails, until nothing changes, every member that requires a
// capability from a failed member; their clients are closed. It returns
// warnings for optional requirements that lost their provider. Choices are
// sorted, so the outcome is deterministic.
func (m *Manager) cascade(ctx context.Context, results []Result, closure *capability.Closure) []Warning {
	byName := make(map[string]*Result, len(results))
	for i := range results {
		byName[results[i].Package.Name] = &results[i]
	}
	var notes []Warning
	var stopped []*Client
	type use struct {
		plugin string
		key    capability.Key
	}
	noted := map[use]bool{}
	for changed := true; changed; {
		changed = false
		for _, ch := range closure.Choices {
			dep, prov := byName[ch.Package], byName[ch.Provider]
			if dep == nil || prov == nil || prov.State != StateFailed || dep.State == StateFailed {
				continue
			}
			err := &DependencyError{Plugin: ch.Package, Capability: ch.Requirement.Key, Provider: ch.Provider, Err: prov.Err}
			if ch.Requirement.Optional {
				if u := (use{ch.Package, ch.Requirement.Key}); !noted[u] {
					noted[u] = true
					notes = append(notes, Warning{Plugin: ch.Package, Err: fmt.Errorf("runs without optional capability: %w", err)})
				}
				continue
			}
			if dep.Client != nil {
				stopped = append(stopped, dep.Client)
			}
			dep.State, dep.Err, dep.Client = StateFailed, err, nil
			m.emit(Event{Plugin: ch.Package, State: StateFailed, Err: err})
			changed = true
		}
	}
	if err := CloseAll(context.WithoutCancel(ctx), stopped); err != nil {
		m.opts.Client.withDefaults().Logger.Warn("closing plugins whose dependency failed", "error", err)
	}
	return notes
}
