package contribution

import "slices"

// Isolate applies the isolation rule of optional plugins
// (docs/architecture.md, "Isolation of optional plugins") to the problems
// of a failed Build: it returns the plugins to leave out, each with its
// reason (the messages of the rules it broke, "; " between them, naming
// the other party of a conflict). optional reports whether a plugin may be
// left out (an optional member whose contributions were added).
//
// It returns nil, failing the build, when any Error problem cannot be
// pinned on an optional plugin: a problem of the host spec or of
// slot_owners, or one whose plugin sources are all required (a required
// plugin's own violation, or a conflict between required plugins). In a
// conflict between a required and an optional plugin the optional one is
// left out; in a conflict between optional plugins, all of them (unless
// slot_owners names one, in which case Build reports no conflict).
// Warnings are ignored.
//
// It is the one decision both a build (package kernel's builder) and a
// plan (generation.NewPlan) apply, each round of leaving plugins out and
// building the registry again from the rest.
func Isolate(problems []Problem, optional func(plugin string) bool) map[string]string {
	out := map[string]string{}
	for _, p := range problems {
		if p.Severity != Error {
			continue
		}
		if p.Code == CodeHostSpec || p.Code == CodeOwnerNotClaiming {
			return nil
		}
		var names []string
		for _, src := range p.Sources {
			if src.Scope == ScopePlugin && optional(src.Plugin) && !slices.Contains(names, src.Plugin) {
				names = append(names, src.Plugin)
			}
		}
		if len(names) == 0 {
			return nil
		}
		for _, name := range names {
			if out[name] != "" {
				out[name] += "; "
			}
			out[name] += p.Message
		}
	}
	return out
}
