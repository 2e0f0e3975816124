package pluginpkg

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/internal/jsonfile"
)

// Parse decodes and validates a plugin.json manifest. path names the manifest
// in messages only; it is not read.
//
// On success it returns a Manifest whose every field is valid and a nil
// error. Otherwise it returns nil and a *ValidationError listing every
// problem found, each with its JSON field path. Invalid JSON is reported as a
// single problem with its line and column. A manifest declaring a format
// newer than FormatVersion is reported with that one problem only, since
// this build cannot know what its other fields mean. A manifest must be
// UTF-8: a string or key holding other bytes is a problem at its field path,
// and a leading byte-order mark is a problem of its own (the rest is still
// checked).
func Parse(path string, data []byte) (*Manifest, error) {
	var problems []FieldError
	switch {
	case len(data) > MaxManifestSize:
		problems = append(problems, FieldError{Message: fmt.Sprintf("manifest is larger than %d bytes", MaxManifestSize)})
	case bytes.HasPrefix(data, utf16BE) || bytes.HasPrefix(data, utf16LE):
		problems = append(problems, FieldError{Message: "starts with a UTF-16 byte-order mark; save it as UTF-8 without one"})
	default:
		if rest, ok := bytes.CutPrefix(data, utf8BOM); ok {
			problems = append(problems, FieldError{Message: "starts with a UTF-8 byte-order mark; remove it"})
			data = rest
		}
		m, more := parse(data)
		if problems = append(problems, more...); len(problems) == 0 {
			return m, nil
		}
	}
	return nil, &ValidationError{Path: path, Problems: problems}
}

// The byte-order marks Parse names (a BOM is U+FEFF, encoded).
var (
	utf8BOM = []byte{0xEF, 0xBB, 0xBF}
	utf16BE = []byte{0xFE, 0xFF}
	utf16LE = []byte{0xFF, 0xFE}
)

// parse decodes and validates data, which starts after any byte-order mark.
// It returns the manifest, or the problems found.
func parse(data []byte) (*Manifest, []FieldError) {
	fail := func(msg string) []FieldError { return []FieldError{{Message: msg}} }
	li := jsonfile.NewLines(data)
	root, err := jsonfile.Parse(data, li)
	switch {
	case errors.Is(err, jsonfile.ErrEmpty):
		return nil, fail("manifest is empty")
	case err != nil:
		return nil, fail(err.Error())
	}
	if root.Kind != jsonfile.KindObject {
		return nil, fail(fmt.Sprintf("manifest must be a JSON object, got %s", root.Kind))
	}
	if msg := newerFormatOf(root); msg != "" {
		return nil, []FieldError{{Field: "format", Message: msg}}
	}
	p := &manifestParser{validator: validator{li: li}, m: &Manifest{}}
	p.object("", root, p.rootFields())
	p.crossChecks()
	if len(p.problems) > 0 {
		return nil, p.problems
	}
	return p.m, nil
}

// ParseFile reads and parses the manifest at path. Read errors are returned
// as they are (wrapping fs errors, so errors.Is(err, fs.ErrNotExist) works);
// an invalid manifest gives a *ValidationError naming path, and so does a
// file larger than MaxManifestSize or one that is not a regular file.
func ParseFile(path string) (*Manifest, error) {
	data, err := readManifest(path)
	if err != nil {
		return nil, manifestReadError(path, err)
	}
	return Parse(path, data)
}

// readManifest reads a manifest file of at most MaxManifestSize bytes; see
// homefile.Read.
func readManifest(path string) ([]byte, error) {
	return homefile.Read(path, MaxManifestSize)
}

// manifestReadError turns a file homefile refused (too large, or not a
// regular file) into a one-problem *ValidationError naming path; other
// errors are returned as they are.
func manifestReadError(path string, err error) error {
	var refused *homefile.Error
	if !errors.As(err, &refused) {
		return err
	}
	return &ValidationError{Path: path, Problems: []FieldError{{Message: "manifest is " + refused.Reason()}}}
}

// newerFormatOf returns the "needs a newer extkernel" message when the root
// object declares an integer format above FormatVersion.
func newerFormatOf(root *jsonfile.Node) string {
	for _, m := range root.Members {
		if m.Key != "format" || m.DupOf >= 0 {
			continue
		}
		var v validator
		f, inRange, ok := v.integer("format", m.Val)
		switch {
		case !ok:
		case !inRange && m.Val.Text[0] != '-':
			return newerFormat(m.Val.Text)
		case inRange && f > FormatVersion:
			return newerFormat(m.Val.Text)
		}
	}
	return ""
}

// manifestParser walks a decoded manifest, filling m and collecting problems.
type manifestParser struct {
	validator
	m           *Manifest
	provideAt   map[capability.Key]int // provides index of each valid key
	requireKeys []capability.Key       // requires[i] key, "" when invalid
	methodsAt   []int                  // provides indexes that list methods
}

func (p *manifestParser) rootFields() []field {
	return []field{
		{name: "$schema", check: func(f fieldPath, n *jsonfile.Node) { p.str(f, n) }},
		{name: "format", required: true, check: p.format},
		{name: "name", required: true, check: func(f fieldPath, n *jsonfile.Node) {
			if s, ok := p.str(f, n); ok {
				p.rule(f, checkName(s))
				p.m.Name = s
			}
		}},
		{name: "version", required: true, check: func(f fieldPath, n *jsonfile.Node) {
			if s, ok := p.str(f, n); ok {
				v, msg := parseVersion(s)
				p.rule(f, msg)
				p.m.Version = v
			}
		}},
		{name: "description", check: func(f fieldPath, n *jsonfile.Node) {
			p.m.Description, _ = p.str(f, n)
		}},
		{name: "runtime", check: p.runtime},
		{name: "provides", check: p.provides},
		{name: "requires", check: p.requires},
		{name: "permissions", check: p.permissions},
		{name: "kernel", check: func(f fieldPath, n *jsonfile.Node) {
			if s, ok := p.str(f, n); ok {
				c, msg := parseConstraint(s)
				p.rule(f, msg)
				p.m.Kernel, p.m.KernelText = c, s
			}
		}},
	}
}

// rule records msg as a problem at f unless it is empty.
func (p *manifestParser) rule(f fieldPath, msg string) {
	if msg != "" {
		p.add(f, "%s", msg)
	}
}

func (p *manifestParser) format(f fieldPath, n *jsonfile.Node) {
	v, inRange, ok := p.integer(f, n)
	switch {
	case !ok:
	case !inRange:
		p.add(f, "unsupported format %s (this build reads format %d)", n.Text, FormatVersion)
	default:
		p.rule(f, checkFormat(v))
		p.m.Format = int(v)
	}
}

func (p *manifestParser) provides(f fieldPath, n *jsonfile.Node) {
	if n.Kind != jsonfile.KindArray {
		p.typeError(f, "an array", n)
		return
	}
	p.provideAt = map[capability.Key]int{}
	for i, e := range n.Elems {
		var prov capability.Provided
		var methods map[string]string
		ef := f.index(i)
		ok := p.object(ef, e, []field{
			{name: "capability", required: true, check: func(f fieldPath, n *jsonfile.Node) {
				prov.Key = p.capabilityKey(f, n)
				if at, dup := p.provideAt[prov.Key]; dup && prov.Key != "" {
					p.add(f, "duplicate capability %q (already provided by provides[%d])", prov.Key, at)
				} else if prov.Key != "" {
					p.provideAt[prov.Key] = i
				}
			}},
			{name: "version", required: true, check: func(f fieldPath, n *jsonfile.Node) {
				if s, ok := p.str(f, n); ok {
					v, msg := parseVersion(s)
					p.rule(f, msg)
					prov.Version = v
				}
			}},
			{name: "methods", check: func(f fieldPath, n *jsonfile.Node) {
				if methods = p.methods(f, n); methods != nil {
					p.methodsAt = append(p.methodsAt, i)
				}
			}},
		})
		if ok {
			p.m.Provides = append(p.m.Provides, prov)
			p.addMethods(prov.Key, methods)
		}
	}
}

// methods checks a provides[].methods object: each member a method name
// (an identifier) mapped to a provider ref, at least one. It returns the
// valid members.
func (p *manifestParser) methods(f fieldPath, n *jsonfile.Node) map[string]string {
	if n.Kind != jsonfile.KindObject {
		p.typeError(f, "an object of strings", n)
		return nil
	}
	if len(n.Members) == 0 {
		p.add(f, "%s", noMethods)
		return nil
	}
	out := map[string]string{}
	for _, m := range n.Members {
		mf := f.child(m.Key)
		if p.badKey(mf, m) || p.duplicate(mf, n, m) {
			continue
		}
		ref, ok := p.str(mf, m.Val)
		if !ok {
			continue
		}
		if msg := checkMethod(m.Key, ref); msg != "" {
			p.add(mf, "%s", msg)
			continue
		}
		out[m.Key] = ref
	}
	return out
}

// addMethods records the valid methods of capability key, if any.
func (p *manifestParser) addMethods(key capability.Key, methods map[string]string) {
	if key == "" || len(methods) == 0 {
		return
	}
	if p.m.Methods == nil {
		p.m.Methods = map[capability.Key]map[string]string{}
	}
	p.m.Methods[key] = methods
}

func (p *manifestParser) requires(f fieldPath, n *jsonfile.Node) {
	if n.Kind != jsonfile.KindArray {
		p.typeError(f, "an array", n)
		return
	}
	seen := map[capability.Key]int{}
	p.requireKeys = make([]capability.Key, len(n.Elems))
	for i, e := range n.Elems {
		req := capability.Requirement{}
		constraintSet := false
		ok := p.object(f.index(i), e, []field{
			{name: "capability", required: true, check: func(f fieldPath, n *jsonfile.Node) {
				req.Key = p.capabilityKey(f, n)
				if at, dup := seen[req.Key]; dup && req.Key != "" {
					p.add(f, "duplicate capability %q (already required by requires[%d])", req.Key, at)
				} else if req.Key != "" {
					seen[req.Key] = i
					p.requireKeys[i] = req.Key
				}
			}},
			{name: "version", check: func(f fieldPath, n *jsonfile.Node) {
				if s, ok := p.str(f, n); ok {
					c, msg := parseConstraint(s)
					p.rule(f, msg)
					req.Constraint, constraintSet = c, true
				}
			}},
			{name: "optional", check: func(f fieldPath, n *jsonfile.Node) { req.Optional, _ = p.boolean(f, n) }},
		})
		if !constraintSet {
			req.Constraint = anyVersion()
		}
		if ok {
			p.m.Requires = append(p.m.Requires, req)
		}
	}
}

// capabilityKey returns the key at f, or "" after reporting a problem.
func (p *manifestParser) capabilityKey(f fieldPath, n *jsonfile.Node) capability.Key {
	s, ok := p.str(f, n)
	if !ok {
		return ""
	}
	k := capability.Key(s)
	if err := k.Validate(); err != nil {
		p.add(f, "%v", err)
		return ""
	}
	return k
}

// crossChecks reports problems spanning several fields, after the document
// walk: a package may not require a capability it provides, and only a
// package with a runtime has providers to implement methods and a process
// to confine.
func (p *manifestParser) crossChecks() {
	if p.m.Runtime == nil && p.m.Permissions != nil {
		p.add("permissions", "%s", permissionsWithoutRuntime)
	}
	if p.m.Runtime == nil {
		for _, i := range p.methodsAt {
			p.add(fieldPath("provides").index(i).child("methods"), "%s", methodsWithoutRuntime)
		}
	}
	for i, k := range p.requireKeys {
		if at, ok := p.provideAt[k]; ok && k != "" {
			p.add(fieldPath("requires").index(i).child("capability"),
				"%q is provided by this package itself (provides[%d]); a package cannot require its own capability", k, at)
		}
	}
}

// points and slots share the list rules: valid IDs, no duplicates.
func (p *manifestParser) points(f fieldPath, n *jsonfile.Node) []contribution.Point {
	ids := p.idList(f, n, "point", func(s string) error { return contribution.Point(s).Validate() })
	out := make([]contribution.Point, len(ids))
	for i, s := range ids {
		out[i] = contribution.Point(s)
	}
	return out
}

func (p *manifestParser) slots(f fieldPath, n *jsonfile.Node) []contribution.Slot {
	ids := p.idList(f, n, "slot", func(s string) error { return contribution.Slot(s).Validate() })
	out := make([]contribution.Slot, len(ids))
	for i, s := range ids {
		out[i] = contribution.Slot(s)
	}
	return out
}

func (p *manifestParser) idList(f fieldPath, n *jsonfile.Node, what string, validate func(string) error) []string {
	if n.Kind != jsonfile.KindArray {
		p.typeError(f, "an array of strings", n)
		return nil
	}
	var out []string
	seen := map[string]int{}
	for i, e := range n.Elems {
		s, ok := p.str(f.index(i), e)
		if !ok {
			continue
		}
		if err := validate(s); err != nil {
			p.add(f.index(i), "%v", err)
			continue
		}
		if at, dup := seen[s]; dup {
			p.add(f.index(i), "duplicate %s %q (also at %s)", what, s, f.index(at))
			continue
		}
		seen[s] = i
		out = append(out, s)
	}
	return out
}
