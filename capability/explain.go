package capability

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// enableCommand is the command a user runs to enable a package; a package
// name follows it.
const enableCommand = "kernelctl enable "

// explain builds the Problem for a requirement of member m that no enabled
// provider satisfies. o holds every offer of the key and may be nil.
//
// A required requirement is an Error of kind Missing, VersionMismatch or
// ProviderDisabled; an optional one is a Warning of kind
// OptionalUnsatisfied with the same explanation and that kind as Cause.
func (r *resolver) explain(m int, req Requirement, o *offers) Problem {
	name := r.pkgs[m].Name
	cause, detail := r.detail(req, o)
	p := Problem{
		Severity:    Error,
		Kind:        cause,
		Cause:       cause,
		Package:     name,
		Requirement: req,
	}
	verb := "requires"
	if req.Optional {
		verb = "optionally requires"
		p.Severity = Warning
		p.Kind = OptionalUnsatisfied
	}
	p.Message = fmt.Sprintf("package %q %s %s %s: %s", name, verb, req.Key, req.Constraint, detail)
	if req.Optional {
		p.Message += "; " + name + " runs without it"
	}
	return p
}

// detail classifies why no enabled provider satisfies req and explains it,
// naming every provider of the key with the version it offers:
//
//   - Missing: nobody, enabled or not, provides the key;
//   - ProviderDisabled: a disabled package would satisfy req;
//   - VersionMismatch: every provider offers a version outside req's
//     constraint.
func (r *resolver) detail(req Requirement, o *offers) (ProblemKind, string) {
	if o == nil || len(o.enabled)+len(o.disabled) == 0 {
		return Missing, "no installed package provides " + string(req.Key)
	}
	var enable, mismatch []string
	for _, c := range inMessageOrder(o.disabled) {
		if req.Constraint.Check(c.version) {
			p := r.pkgs[c.pkg]
			enable = append(enable, fmt.Sprintf("package %s %s provides %s %s but is disabled; enable it with: %s%s",
				p.Name, p.Version, req.Key, c.version, enableCommand, p.Name))
		}
	}
	for _, c := range inMessageOrder(o.enabled) {
		mismatch = append(mismatch, r.mismatch(req, c, ""))
	}
	for _, c := range inMessageOrder(o.disabled) {
		if !req.Constraint.Check(c.version) {
			mismatch = append(mismatch, r.mismatch(req, c, " (disabled)"))
		}
	}
	if len(enable) > 0 {
		return ProviderDisabled, strings.Join(append(enable, mismatch...), "; ")
	}
	return VersionMismatch, "no enabled package provides it; " + strings.Join(mismatch, "; ")
}

// mismatch says that candidate c offers a version outside req's constraint.
// note follows the package name and version.
func (r *resolver) mismatch(req Requirement, c candidate, note string) string {
	if c.pkg == hostIndex {
		return fmt.Sprintf("the host provides %s %s, which does not satisfy %s", req.Key, c.version, req.Constraint)
	}
	p := r.pkgs[c.pkg]
	return fmt.Sprintf("package %s %s%s provides %s %s, which does not satisfy %s",
		p.Name, p.Version, note, req.Key, c.version, req.Constraint)
}

// inMessageOrder returns a copy of cs ordered for reading: the host first,
// then by package name, then by ascending version.
func inMessageOrder(cs []candidate) []candidate {
	cs = slices.Clone(cs)
	slices.SortFunc(cs, func(a, b candidate) int {
		if c := cmp.Compare(a.pkg, b.pkg); c != 0 {
			return c // hostIndex sorts first
		}
		return a.version.Compare(b.version)
	})
	return cs
}

// unknownRoot is the Error for a requested root that is not installed.
func unknownRoot(name string) Problem {
	return Problem{
		Severity: Error,
		Kind:     UnknownRoot,
		Package:  name,
		Message:  fmt.Sprintf("package %q was requested but is not installed", name),
	}
}

// disabledRoot is the Error for a requested root that is disabled.
func disabledRoot(name string) Problem {
	return Problem{
		Severity: Error,
		Kind:     RootDisabled,
		Package:  name,
		Message:  fmt.Sprintf("package %q was requested but is disabled; enable it with: %s%s", name, enableCommand, name),
	}
}

// problemOrder sorts problems by severity (errors first), package,
// requirement key, kind, cycle and message, a total order for every
// problem Resolve produces.
func problemOrder(a, b Problem) int {
	return cmp.Or(
		cmp.Compare(a.Severity, b.Severity),
		cmp.Compare(a.Package, b.Package),
		cmp.Compare(a.Requirement.Key, b.Requirement.Key),
		cmp.Compare(a.Kind, b.Kind),
		slices.Compare(a.Cycle, b.Cycle),
		cmp.Compare(a.Message, b.Message),
	)
}
