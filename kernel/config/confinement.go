package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/extkernel/extkernel/pluginpkg"
)

// AllPackages is the key of Confinement.Grants and Denies whose entry
// applies to every package, besides the package's own.
const AllPackages = "*"

// Confinement says how the kernel confines plugins to their manifests'
// permissions (config key confinement; docs/security.md, "Confinement").
type Confinement struct {
	// Default is the mode of every package without its own in Packages:
	// pluginpkg.ConfineRequire, ConfineBestEffort or ConfineOff; "" is
	// off.
	Default string
	// Packages overrides Default per package name.
	Packages map[string]string
	// Grants add to a package's permissions and Denies remove from them,
	// deny winning; each keyed by package name, or AllPackages for every
	// package.
	Grants, Denies map[string]*pluginpkg.Permissions
}

// ConfinementOf returns the confinement of package name: its mode, and
// its grants and denies with those for every package (AllPackages).
func (c *Config) ConfinementOf(name string) pluginpkg.Confinement {
	mode := c.Confinement.Default
	if m, ok := c.Confinement.Packages[name]; ok {
		mode = m
	}
	return pluginpkg.Confinement{Mode: mode,
		Grants: mergePermissions(c.Confinement.Grants[AllPackages], c.Confinement.Grants[name]),
		Denies: mergePermissions(c.Confinement.Denies[AllPackages], c.Confinement.Denies[name])}
}

// mergePermissions returns the union of a and b, nil when both are nil.
func mergePermissions(a, b *pluginpkg.Permissions) *pluginpkg.Permissions {
	if a == nil || b == nil {
		return cmpOr(a, b).Clone()
	}
	u := func(x, y []string) []string {
		out := slices.Concat(x, y)
		slices.Sort(out)
		return slices.Compact(out)
	}
	return &pluginpkg.Permissions{Read: u(a.Read, b.Read), Write: u(a.Write, b.Write),
		Connect: u(a.Connect, b.Connect), Exec: u(a.Exec, b.Exec)}
}

func cmpOr(a, b *pluginpkg.Permissions) *pluginpkg.Permissions {
	if a != nil {
		return a
	}
	return b
}

// confinement checks the modes and the permissions of c.
func (ck *checker) confinement(c Confinement) {
	ck.mode("confinement.default", c.Default)
	for _, name := range slices.Sorted(maps.Keys(c.Packages)) {
		ck.mode("confinement.packages."+name, c.Packages[name])
	}
	for key, m := range map[string]map[string]*pluginpkg.Permissions{"grants": c.Grants, "denies": c.Denies} {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			var ve *pluginpkg.ValidationError
			if err := m[name].Validate(); errors.As(err, &ve) {
				for _, p := range ve.Problems {
					ck.add(fmt.Sprintf("confinement.%s.%s.%s", key, name, p.Field), "%s", p.Message)
				}
			}
		}
	}
}

// mode checks one confinement mode.
func (ck *checker) mode(path, m string) {
	if msg := pluginpkg.CheckConfinementMode(m); msg != "" {
		ck.add(path, "%s", msg)
	}
}
