package pluginpkg

import (
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/extkernel/extkernel/capability"
)

// Validate checks a Manifest value against the rules Parse enforces, for
// manifests built in code. It returns nil or a *ValidationError (with an
// empty Path) whose field paths are the JSON names. A Manifest returned by
// Parse always validates.
func (m *Manifest) Validate() error {
	v := &validator{}
	rule := func(f fieldPath, msg string) {
		if msg != "" {
			v.add(f, "%s", msg)
		}
	}
	rule("format", checkFormat(int64(m.Format)))
	rule("name", checkName(m.Name))
	if m.Version == nil {
		v.add("version", "required field is missing")
	}
	if !utf8.ValidString(m.Description) {
		v.add("description", "%s", notUTF8)
	}
	if m.Runtime != nil {
		m.Runtime.validate(v, rule)
	}
	provided := map[capability.Key]int{}
	for i, p := range m.Provides {
		f := fieldPath("provides").index(i)
		if err := p.Key.Validate(); err != nil {
			v.add(f.child("capability"), "%v", err)
		} else if at, dup := provided[p.Key]; dup {
			v.add(f.child("capability"), "duplicate capability %q (already provided by provides[%d])", p.Key, at)
		} else {
			provided[p.Key] = i
		}
		if p.Version == nil {
			v.add(f.child("version"), "required field is missing")
		}
	}
	m.validateMethods(v, provided)
	m.validateRequires(v, provided)
	if m.Permissions != nil {
		if m.Runtime == nil {
			v.add("permissions", "%s", permissionsWithoutRuntime)
		}
		m.Permissions.validate(v)
	}
	if len(v.problems) > 0 {
		return &ValidationError{Problems: v.problems}
	}
	return nil
}

// validateMethods checks Methods: each capability is one of Provides (its
// problems are reported at that entry's methods), lists at least one
// method, and has valid method names and refs; only a package with a
// runtime may list methods.
func (m *Manifest) validateMethods(v *validator, provided map[capability.Key]int) {
	for _, key := range slices.Sorted(maps.Keys(m.Methods)) {
		at, ok := provided[key]
		if !ok {
			v.add("provides", "methods of capability %q, which provides does not list", key)
			continue
		}
		f := fieldPath("provides").index(at).child("methods")
		methods := m.Methods[key]
		switch {
		case len(methods) == 0:
			v.add(f, "%s", noMethods)
			continue
		case m.Runtime == nil:
			v.add(f, "%s", methodsWithoutRuntime)
		}
		for _, name := range slices.Sorted(maps.Keys(methods)) {
			if msg := checkMethod(name, methods[name]); msg != "" {
				v.add(f.child(name), "%s", msg)
			}
		}
	}
}

func (m *Manifest) validateRequires(v *validator, provided map[capability.Key]int) {
	required := map[capability.Key]int{}
	for i, r := range m.Requires {
		f := fieldPath("requires").index(i).child("capability")
		if err := r.Key.Validate(); err != nil {
			v.add(f, "%v", err)
		} else if at, dup := required[r.Key]; dup {
			v.add(f, "duplicate capability %q (already required by requires[%d])", r.Key, at)
		} else {
			required[r.Key] = i
		}
		if r.Constraint == nil {
			v.add(fieldPath("requires").index(i).child("version"), "required field is missing")
		}
	}
	for i, r := range m.Requires {
		if at, ok := provided[r.Key]; ok && required[r.Key] == i {
			v.add(fieldPath("requires").index(i).child("capability"),
				"%q is provided by this package itself (provides[%d]); a package cannot require its own capability", r.Key, at)
		}
	}
}

func (rt *Runtime) validate(v *validator, rule func(fieldPath, string)) {
	f := fieldPath("runtime")
	rt.validatePlatforms(f, rule)
	for i, a := range rt.Args {
		rule(f.child("args").index(i), checkText(a))
	}
	for _, k := range slices.Sorted(maps.Keys(rt.Env)) {
		rule(f.child("env"), checkEnvName(k))
		rule(f.child("env").child(k), checkText(rt.Env[k]))
	}
	rule(f.child("priority"), checkPriority(int64(rt.Priority)))
	seen := map[string]int{}
	for i, p := range rt.Intercepts {
		validateID(v, f.child("intercepts"), i, "point", string(p), p.Validate(), seen)
	}
	seen = map[string]int{}
	for i, s := range rt.Replaces {
		validateID(v, f.child("replaces"), i, "slot", string(s), s.Validate(), seen)
	}
	rt.validateContributes(v, f.child("contributes"))
	if rt.Activation != "" {
		rule(f.child("activation"), checkActivation(rt.Activation))
	}
	if rt.HandshakeTimeout != 0 {
		rule(f.child("handshake_timeout"), checkTimeout(rt.HandshakeTimeout, strconv.Quote(rt.HandshakeTimeout.String())))
	}
}

func validateID(v *validator, f fieldPath, i int, what, id string, err error, seen map[string]int) {
	switch at, dup := seen[id]; {
	case err != nil:
		v.add(f.index(i), "%v", err)
	case dup:
		v.add(f.index(i), "duplicate %s %q (also at %s)", what, id, f.index(at))
	default:
		seen[id] = i
	}
}
