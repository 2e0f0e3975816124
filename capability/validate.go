package capability

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrInvalidRequest is wrapped by the error Resolve returns for a malformed
// Request: a package with an empty or duplicate name, a nil version or
// constraint, or a capability key outside the grammar. Such input is a bug
// in the caller (pluginpkg rejects it earlier), not a resolution problem.
var ErrInvalidRequest = errors.New("invalid resolve request")

// validate checks the request for malformed input and reports every
// defect, one per line after ErrInvalidRequest's text, sorted so the error
// does not depend on the order of the request. r.pkgs is sorted by name, so
// duplicate names are adjacent.
func (r *resolver) validate(host []Provided) error {
	var defects []string
	for i, p := range r.pkgs {
		if i > 0 && r.pkgs[i-1].Name == p.Name {
			defects = append(defects, fmt.Sprintf("package %q is listed more than once", p.Name))
		}
		defects = validatePackage(defects, p)
	}
	for _, p := range host {
		defects = validateProvided(defects, "host", p)
	}
	if len(defects) == 0 {
		return nil
	}
	slices.Sort(defects)
	defects = slices.Compact(defects)
	return fmt.Errorf("%w:\n%s", ErrInvalidRequest, strings.Join(defects, "\n"))
}

// validatePackage appends the defects of one package to defects. The
// subject is formatted only when there is a defect, keeping the common path
// free of allocations.
func validatePackage(defects []string, p *Package) []string {
	subject := func() string { return fmt.Sprintf("package %q", p.Name) }
	if p.Name == "" {
		defects = append(defects, "a package has an empty name")
	}
	if p.Version == nil {
		defects = append(defects, subject()+": version is nil")
	}
	for _, pr := range p.Provides {
		if pr.Key.Validate() != nil || pr.Version == nil {
			defects = validateProvided(defects, subject(), pr)
		}
	}
	for i, rq := range p.Requires {
		if err := rq.Key.Validate(); err != nil {
			defects = append(defects, fmt.Sprintf("%s: requires[%d]: %v", subject(), i, err))
		}
		if rq.Constraint == nil {
			defects = append(defects, fmt.Sprintf("%s: requires[%d] (%s): constraint is nil", subject(), i, rq.Key))
		}
	}
	return defects
}

// validateProvided appends the defects of one provided capability.
func validateProvided(defects []string, subject string, p Provided) []string {
	if err := p.Key.Validate(); err != nil {
		defects = append(defects, fmt.Sprintf("%s: provides: %v", subject, err))
	}
	if p.Version == nil {
		defects = append(defects, fmt.Sprintf("%s: provides %s with a nil version", subject, p.Key))
	}
	return defects
}
