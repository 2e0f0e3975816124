package capability

import (
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Test builders. Every helper parses its own values, so expected and actual
// values compare equal with reflect.DeepEqual when their text is equal.

func ver(s string) *semver.Version { return semver.MustParse(s) }

func con(s string) *semver.Constraints {
	c, err := semver.NewConstraint(s)
	if err != nil {
		panic(err)
	}
	return c
}

func need(key, constraint string) Requirement {
	return Requirement{Key: Key(key), Constraint: con(constraint)}
}

func want(key, constraint string) Requirement {
	r := need(key, constraint)
	r.Optional = true
	return r
}

func offer(key, version string) Provided { return Provided{Key: Key(key), Version: ver(version)} }

// pkg builds an enabled package from a mix of Provided and Requirement
// values.
func pkg(name, version string, decls ...any) Package {
	p := Package{Name: name, Version: ver(version), Enabled: true}
	for _, d := range decls {
		switch d := d.(type) {
		case Provided:
			p.Provides = append(p.Provides, d)
		case Requirement:
			p.Requires = append(p.Requires, d)
		default:
			panic(fmt.Sprintf("pkg: unexpected %T", d))
		}
	}
	return p
}

func off(p Package) Package {
	p.Enabled = false
	return p
}

// render prints a Closure one fact per line, for readable test failures.
func render(c *Closure) string {
	if c == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "members: %v\n", c.Members)
	for _, ch := range c.Choices {
		fmt.Fprintf(&b, "choice: %s %s %s optional=%v -> %s %s (%d candidates)\n",
			ch.Package, ch.Requirement.Key, ch.Requirement.Constraint, ch.Requirement.Optional,
			ch.Provider, ch.Version, ch.Candidates)
	}
	names := make([]string, 0, len(c.DependsOn))
	for n := range c.DependsOn {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "depends: %s -> %#v\n", n, c.DependsOn[n])
	}
	for _, p := range c.Problems {
		fmt.Fprintf(&b, "problem: %s %s cause=%s pkg=%q key=%q optional=%v cycle=%v\n  %s\n",
			p.Severity, p.Kind, p.Cause, p.Package, p.Requirement.Key, p.Requirement.Optional, p.Cycle, p.Message)
	}
	return b.String()
}
