package pluginpkg

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/capability"
)

// ErrInUse is matched (errors.Is) by the *InUseError of RemoveChecked and
// DisableChecked.
var ErrInUse = errors.New("package in use")

// Guard is what RemoveChecked and DisableChecked check before they take a
// package out of what runs: the host's side of the resolution. A host
// passes its config's capabilities and the packages its policy marks
// required (config.Config.Capabilities, and the names whose
// config.Config.Policy is "required"). The zero Guard checks only the
// packages' own requirements, with nothing provided by the host.
type Guard struct {
	// Host lists the capabilities the host provides: a requirement one of
	// them satisfies depends on no package.
	Host []capability.Provided
	// Required names the packages the host requires.
	Required []string
}

// Dependent is an enabled package with a requirement that only one
// package satisfies.
type Dependent struct {
	// Package is the dependent package's name.
	Package string
	// Requirement is its requirement (never an optional one).
	Requirement capability.Requirement
}

// InUseError reports a package that RemoveChecked or DisableChecked will
// not take away: the host requires it, or enabled packages require a
// capability that it alone provides. It matches ErrInUse.
type InUseError struct {
	// Op is "remove" or "disable".
	Op string
	// Package is the package's name, Home the home's absolute path.
	Package, Home string
	// Required says the Guard lists the package as required by the host.
	Required bool
	// Dependents are the enabled packages that would lose a requirement,
	// sorted by package and capability (Installed.Dependents).
	Dependents []Dependent
}

// Error names the package and every reason: `remove kv in /h: the host
// requires it; memory requires storage.kv ^1.0, which only kv provides`.
func (e *InUseError) Error() string {
	var reasons []string
	if e.Required {
		reasons = append(reasons, "the host requires it")
	}
	if len(e.Dependents) > 0 {
		var needs []string
		for _, d := range e.Dependents {
			needs = append(needs, d.Package+" requires "+requirementText(d.Requirement))
		}
		reasons = append(reasons, strings.Join(needs, ", ")+", which only "+e.Package+" provides")
	}
	return fmt.Sprintf("%s %s in %s: %s", e.Op, e.Package, e.Home, strings.Join(reasons, "; "))
}

// Is reports whether target is ErrInUse.
func (e *InUseError) Is(target error) bool { return target == ErrInUse }

// requirementText is "key" or "key constraint".
func requirementText(r capability.Requirement) string {
	if r.Constraint == nil || r.Constraint.String() == "*" {
		return string(r.Key)
	}
	return string(r.Key) + " " + r.Constraint.String()
}

// Dependents returns the enabled packages other than name with a
// requirement (not an optional one) that name, enabled, satisfies and no
// other enabled package nor a capability in host satisfies: what taking
// name away would break at once (what breaks in turn is the plan's
// cascade). Sorted by package, then capability; empty when name is not an
// enabled package of in.
func (in *Installed) Dependents(name string, host []capability.Provided) []Dependent {
	var target *Package
	for _, p := range in.Packages {
		if p.Name == name && p.Enabled {
			target = p
		}
	}
	if target == nil {
		return nil
	}
	var out []Dependent
	for _, p := range in.Packages {
		if p == target || !p.Enabled {
			continue
		}
		for _, r := range p.Manifest.Requires {
			if !r.Optional && satisfies(target.Manifest.Provides, r) && !in.satisfiedElsewhere(r, name, host) {
				out = append(out, Dependent{Package: p.Name, Requirement: r})
			}
		}
	}
	slices.SortFunc(out, func(a, b Dependent) int {
		return cmp.Or(strings.Compare(a.Package, b.Package), strings.Compare(string(a.Requirement.Key), string(b.Requirement.Key)))
	})
	return out
}

// satisfiedElsewhere reports whether the host or an enabled package other
// than name satisfies r.
func (in *Installed) satisfiedElsewhere(r capability.Requirement, name string, host []capability.Provided) bool {
	if satisfies(host, r) {
		return true
	}
	for _, p := range in.Packages {
		if p.Name != name && p.Enabled && satisfies(p.Manifest.Provides, r) {
			return true
		}
	}
	return false
}

// satisfies reports whether one of provided satisfies r, as the resolver
// decides it (the key, and the constraint checked on the version).
func satisfies(provided []capability.Provided, r capability.Requirement) bool {
	for _, p := range provided {
		if p.Key == r.Key && (r.Constraint == nil || r.Constraint.Check(p.Version)) {
			return true
		}
	}
	return false
}

// inUse is the check of RemoveChecked and DisableChecked on home, with the
// home lock held: nil when g allows taking name away.
func (g Guard) inUse(op, home, name string) error {
	inst, err := loadInstalled(home, nil)
	if err != nil {
		return err
	}
	e := &InUseError{Op: op, Package: name, Home: home, Required: slices.Contains(g.Required, name),
		Dependents: inst.Dependents(name, g.Host)}
	if !e.Required && len(e.Dependents) == 0 {
		return nil
	}
	return e
}

// RemoveChecked is Remove, refused with an *InUseError when g's host
// requires the package or when enabled packages require a capability only
// it provides (Installed.Dependents). The check and the removal happen
// under one hold of the home lock. Remove is the forced form.
func RemoveChecked(home, name string, g Guard) error {
	home, unlock, err := lockForPackage(home, name)
	if err != nil {
		return err
	}
	defer unlock()
	if err := g.inUse("remove", home, name); err != nil {
		return err
	}
	return removeLocked(home, name)
}

// DisableChecked is Disable with RemoveChecked's check, made under the
// same hold of the home lock as the write. Disabling a package that is
// disabled already is never refused. Disable is the forced form.
func DisableChecked(home, name string, g Guard) error {
	return updateEntryChecked(home, name, func(home string, e stateEntry) error {
		if !e.Enabled {
			return nil
		}
		return g.inUse("disable", home, name)
	}, func(e *stateEntry) { e.Enabled = false })
}
