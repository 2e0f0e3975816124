package admin

import (
	"net/url"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/kernel/observe"
)

// eventTypes are the observe.EventType names GET /v1/events filters by.
var eventTypes = []observe.EventType{
	observe.EventAudit, observe.EventBake, observe.EventBuildFailed, observe.EventGenerationPublished, observe.EventNotify,
	observe.EventPlugin, observe.EventPluginCrashed, observe.EventPluginState, observe.EventWarning,
}

// eventFilter selects event lines: of any of plugins (none: all) and of
// any of types (none: all).
type eventFilter struct {
	plugins, types []string
}

func (f eventFilter) match(l EventLine) bool {
	return (len(f.plugins) == 0 || slices.Contains(f.plugins, l.Plugin)) &&
		(len(f.types) == 0 || slices.Contains(f.types, l.Type))
}

// eventQuery parses the plugin and type parameters (each may repeat, or
// list names separated by commas). An unknown type is CodeBadRequest
// listing the types; a plugin that is no member of the current
// generation, not the kernel, and has no events among kept is
// CodeUnknownPlugin.
func (s *Server) eventQuery(q url.Values, kept []EventLine) (eventFilter, *Error) {
	var f eventFilter
	f.plugins, f.types = splitParam(q["plugin"]), splitParam(q["type"])
	names := make([]string, len(eventTypes))
	for i, t := range eventTypes {
		names[i] = string(t)
	}
	for _, t := range f.types {
		if !slices.Contains(names, t) {
			return f, badQuery("type=%q is not an event type%s (types: %s)", t, didYouMean(t, names), strings.Join(names, ", "))
		}
	}
	var seen []string
	for _, l := range kept {
		if l.Plugin != "" {
			seen = append(seen, l.Plugin)
		}
	}
	for _, p := range f.plugins {
		if e := s.knownPlugin(p, "events", seen); e != nil {
			return f, e
		}
	}
	return f, nil
}

// splitParam returns the names of a repeated parameter, each value split
// at commas, empty names dropped.
func splitParam(values []string) []string {
	var out []string
	for _, v := range values {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}
