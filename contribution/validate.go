package contribution

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/extkernel/extkernel/internal/ident"
)

// fieldErr is one broken rule of a contribution: a field path and a message
// that can follow it.
type fieldErr struct{ field, msg string }

// check validates a contribution on its own, reports every problem it has,
// and says whether it takes part in resolution.
func (s *build) check(c Contribution) (KindSpec, bool) {
	spec, accepted := s.kinds[c.Kind]
	if !accepted {
		s.notAccepted(c)
		return KindSpec{}, false
	}
	errs := checkSource(c.Source)
	if c.Priority < MinPriority || c.Priority > MaxPriority {
		errs = append(errs, fieldErr{"priority", fmt.Sprintf("%d is outside %d..%d (higher runs first)",
			c.Priority, MinPriority, MaxPriority)})
	}
	keyErrs := checkKey(spec, c)
	errs = append(errs, keyErrs...)
	for _, e := range errs {
		s.report(Problem{
			Severity: Error, Code: CodeInvalid, Kind: c.Kind, Key: c.Key, Sources: []Source{c.Source},
			Message: describe(spec, c) + ": " + e.field + ": " + e.msg,
		})
	}
	if len(keyErrs) == 0 && !s.declared(spec, c.Key) {
		s.unknownTarget(spec, c)
		return KindSpec{}, false
	}
	return spec, len(errs) == 0
}

// describe names a contribution in an invalid-contribution message, e.g.
// `interceptor at point "tool.before" from "audit" (handshake), declaration 2`.
// It names Seq rather than the Add index, so messages do not depend on the
// order contributions were added in.
func describe(spec KindSpec, c Contribution) string {
	from := c.Source.String()
	if c.Source.Scope == ScopePlugin && c.Source.Plugin == "" {
		from = "a plugin with no name"
	} else if c.Source.Scope != ScopePlugin && c.Source.Scope != ScopeHost {
		from = "an unknown scope"
	}
	return fmt.Sprintf("%s from %s, declaration %d", subject(spec, c.Key), from, c.Seq)
}

func (s *build) notAccepted(c Contribution) {
	if c.Kind == "" {
		s.report(Problem{Severity: Error, Code: CodeInvalid, Key: c.Key, Sources: []Source{c.Source},
			Message: fmt.Sprintf("declaration %d from %s: kind: must not be empty", c.Seq, c.Source)})
		return
	}
	s.report(Problem{
		Severity: s.lenient(), Code: CodeNotAccepted, Kind: c.Kind, Key: c.Key, Sources: []Source{c.Source},
		Message: fmt.Sprintf("%s contributes %s %q, a kind the host does not accept; it is ignored",
			c.Source, c.Kind, c.Key),
	})
}

// declared reports whether key names a point or slot the host declares, for
// kinds that target one.
func (s *build) declared(spec KindSpec, key string) bool {
	switch spec.Target {
	case TargetPoint:
		return s.points[Point(key)]
	case TargetSlot:
		return s.slots[Slot(key)]
	}
	return true
}

func (s *build) unknownTarget(spec KindSpec, c Contribution) {
	what, list := "point", "points"
	if spec.Target == TargetSlot {
		what, list = "slot", "slots"
	}
	s.report(Problem{
		Severity: s.lenient(), Code: CodeUnknownTarget, Kind: c.Kind, Key: c.Key, Sources: []Source{c.Source},
		Message: fmt.Sprintf("%s contributes %s to %s %q, which the host does not declare; it is ignored (declared %s: %s)",
			c.Source, spec.Kind, what, c.Key, list, s.declaredList(spec.Target)),
	})
}

// declaredList lists the valid points or slots the host declares, in
// declaration order without duplicates.
func (s *build) declaredList(t Target) string {
	var names []string
	seen := make(map[string]bool)
	add := func(name string, valid bool) {
		if valid && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	if t == TargetSlot {
		for _, sl := range s.host.Slots {
			add(string(sl), s.slots[sl])
		}
	} else {
		for _, p := range s.host.Points {
			add(string(p), s.points[p])
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// checkSource checks a Source's scope, plugin name and origin.
func checkSource(src Source) []fieldErr {
	var errs []fieldErr
	switch src.Scope {
	case ScopeHost:
		if src.Plugin != "" {
			errs = append(errs, fieldErr{"source.plugin", fmt.Sprintf("must be empty for a host contribution, got %q", src.Plugin)})
		}
		return errs
	case ScopePlugin:
	default:
		return append(errs, fieldErr{"source.scope", fmt.Sprintf("%v is neither ScopeHost nor ScopePlugin", src.Scope)})
	}
	switch {
	case src.Plugin == "":
		errs = append(errs, fieldErr{"source.plugin", "must not be empty for a plugin contribution"})
	case strings.ContainsAny(src.Plugin, "/ \t\r\n"):
		errs = append(errs, fieldErr{"source.plugin", fmt.Sprintf("%q must not contain '/' or whitespace", src.Plugin)})
	}
	if src.Origin != OriginManifest && src.Origin != OriginHandshake {
		errs = append(errs, fieldErr{"source.origin", fmt.Sprintf("%q is neither %q nor %q", src.Origin, OriginManifest, OriginHandshake)})
	}
	return errs
}

// checkKey checks the key's grammar and, for built-in kinds, that the payload
// has the kind's type and agrees with the key.
func checkKey(spec KindSpec, c Contribution) []fieldErr {
	switch spec.Kind {
	case KindInterceptor:
		p, ok := c.Payload.(Interceptor)
		return builtinKey(c, ok, Interceptor{}, "point", string(p.Point), Point(c.Key).Validate())
	case KindStrategy:
		p, ok := c.Payload.(Strategy)
		return builtinKey(c, ok, Strategy{}, "slot", string(p.Slot), Slot(c.Key).Validate())
	case KindProvider:
		p, ok := c.Payload.(Provider)
		if !ok {
			return builtinKey(c, ok, Provider{}, "", "", nil)
		}
		if err := ValidateProviderRef(p.Ref); err != nil {
			return []fieldErr{{"payload.ref", err.Error()}}
		}
		return builtinKey(c, ok, Provider{}, "namespaced ID", namespaced(c, p.Ref, providerKey), nil)
	case KindAction:
		p, ok := c.Payload.(Action)
		if !ok {
			return builtinKey(c, ok, Action{}, "", "", nil)
		}
		if err := ValidateActionID(p.ID); err != nil {
			return []fieldErr{{"payload.id", err.Error()}}
		}
		errs := builtinKey(c, ok, Action{}, "namespaced ID", namespaced(c, p.ID, actionKey), nil)
		if strings.TrimSpace(p.Title) == "" {
			errs = append(errs, fieldErr{"payload.title", "must not be empty"})
		}
		return errs
	}
	var err error
	switch spec.Target {
	case TargetPoint:
		err = Point(c.Key).Validate()
	case TargetSlot:
		err = Slot(c.Key).Validate()
	default:
		err = ident.ValidateDotted(string(spec.Kind)+" key", c.Key)
	}
	if err != nil {
		return []fieldErr{{"key", err.Error()}}
	}
	return nil
}

// namespaced returns key(c.Source, local), the namespaced ID a provider or
// action declared as local must have: c.Key itself when it is that one,
// checked without building it (a generation validates its plugins'
// providers by the hundred).
func namespaced(c Contribution, local string, key func(Source, string) string) string {
	if namespacedIs(c.Key, c.Source, local) {
		return c.Key
	}
	return key(c.Source, local)
}

// namespacedIs reports whether id is "host/<local>" for the host's
// source, "plugin/<plugin>/<local>" for a plugin's (providerKey,
// actionKey).
func namespacedIs(id string, src Source, local string) bool {
	if src.Scope == ScopeHost {
		rest, ok := strings.CutPrefix(id, "host/")
		return ok && rest == local
	}
	rest, ok := strings.CutPrefix(id, "plugin/")
	if ok {
		rest, ok = strings.CutPrefix(rest, src.Plugin)
	}
	if ok {
		rest, ok = strings.CutPrefix(rest, "/")
	}
	return ok && rest == local
}

// builtinKey checks a built-in kind's payload type (ok), that the payload's
// own key (what, want) equals c.Key, and the key's grammar (grammarErr).
// zero is the zero value of the payload type (a literal: boxing it costs
// nothing), named in the message of a payload of another type.
func builtinKey(c Contribution, ok bool, zero any, what, want string, grammarErr error) []fieldErr {
	if !ok {
		return []fieldErr{{"payload", fmt.Sprintf("is %T, want %T", c.Payload, zero)}}
	}
	if grammarErr != nil {
		return []fieldErr{{"key", grammarErr.Error()}}
	}
	if c.Key != want {
		return []fieldErr{{"key", fmt.Sprintf("%s does not match the payload's %s %s", strconv.Quote(c.Key), what, strconv.Quote(want))}}
	}
	return nil
}
