package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
)

// apiFile is one of the two API files: the lines of a release's API, or
// the lines added since.
type apiFile struct {
	module string          // from its "# module" comment; empty if none
	lines  map[string]bool // its features' lines
}

// readAPI reads an API file: one feature a line, blank lines and "#"
// comments ignored, "# module <path>" naming the module it describes. A
// missing file reads as empty.
func readAPI(name string) (apiFile, error) {
	f := apiFile{lines: map[string]bool{}}
	data, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if mod, ok := strings.CutPrefix(line, "# module "); ok {
			f.module = strings.TrimSpace(mod)
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f.lines[line] = true
	}
	return f, sc.Err()
}

// writeAPI writes the features' lines after a header of comment lines.
func writeAPI(name string, header []string, lines []string) error {
	var b bytes.Buffer
	for _, h := range header {
		b.WriteString("# " + h + "\n")
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return os.WriteFile(name, b.Bytes(), 0o644)
}

// breakingNames returns the names CHANGELOG.md's "## Unreleased" section
// allows to break: every `code span` in the body of a "### Breaking..."
// heading of that section (up to the next "###" or "##" heading), with a
// trailing "()" trimmed. A changelog without that section allows nothing.
func breakingNames(changelog []byte) map[string]bool {
	names := map[string]bool{}
	inUnreleased, inBreaking := false, false
	span := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(string(changelog), "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			inUnreleased = strings.TrimSpace(line) == "## Unreleased"
			inBreaking = false
			continue
		case strings.HasPrefix(line, "### "):
			inBreaking = inUnreleased && strings.HasPrefix(strings.TrimPrefix(line, "### "), "Breaking")
		}
		if !inBreaking {
			continue
		}
		for _, m := range span.FindAllStringSubmatch(line, -1) {
			names[strings.TrimSuffix(strings.TrimSpace(m[1]), "()")] = true
		}
	}
	return names
}

// allowed reports whether names covers key ("kernel/config.Config.Home"):
// names holds the key itself or an enclosing name ("kernel/config.Config",
// removing a type and its members), its package named by its path or by
// its last element ("config.Config.Home").
func allowed(names map[string]bool, key string) bool {
	pkg, ident, ok := strings.Cut(key, ".")
	if !ok {
		return false
	}
	for _, p := range []string{pkg, path.Base(pkg)} {
		parts := strings.Split(ident, ".")
		for i := len(parts); i > 0; i-- {
			if names[p+"."+strings.Join(parts[:i], ".")] {
				return true
			}
		}
	}
	return false
}

// report is the outcome of a comparison, each list sorted.
type report struct {
	unrecorded []string // in the code, in neither API file
	stale      []string // in the additions file, not in the code
	broken     []string // in the release's file, not in the code, not allowed
	allowed    []string // in the release's file, not in the code, allowed
}

func (r report) ok() bool {
	return len(r.unrecorded) == 0 && len(r.stale) == 0 && len(r.broken) == 0
}

// compare checks the code's features against the release's API (base) and
// the additions since (next). A line of base the code lacks was removed or
// changed: allowed only when the changelog names its key under a breaking
// heading, or when the module's path changed (a new major version).
func compare(cur []feature, module string, base, next apiFile, breaking map[string]bool) report {
	var r report
	have := map[string]bool{}
	for _, f := range cur {
		have[f.line] = true
		if !base.lines[f.line] && !next.lines[f.line] {
			r.unrecorded = append(r.unrecorded, f.line)
		}
	}
	for _, l := range sortedKeys(next.lines) {
		if !have[l] {
			r.stale = append(r.stale, l)
		}
	}
	newMajor := base.module != "" && base.module != module
	for _, l := range sortedKeys(base.lines) {
		if have[l] {
			continue
		}
		if newMajor || allowed(breaking, keyOf(l)) {
			r.allowed = append(r.allowed, l)
		} else {
			r.broken = append(r.broken, l)
		}
	}
	return r
}

// keyOf returns the key of an API file's line ("pkg kernel, method
// (*Kernel) Close() error" is "kernel.Kernel.Close"): the line is read back
// from a file, not built by the walker.
func keyOf(line string) string {
	rest, ok := strings.CutPrefix(line, "pkg ")
	if !ok {
		return ""
	}
	pkg, decl, ok := strings.Cut(rest, ", ")
	if !ok {
		return ""
	}
	word, decl, _ := strings.Cut(decl, " ")
	switch word {
	case "method": // (*T[P]) Name(...) ...
		recv, after, _ := strings.Cut(decl, ") ")
		recv = strings.TrimLeft(strings.TrimPrefix(recv, "("), "*")
		return pkg + "." + identPrefix(recv) + "." + identPrefix(after)
	case "type":
		return pkg + "." + typeKey(decl)
	default: // const, var, func
		return pkg + "." + identPrefix(decl)
	}
}

// typeKey returns the key of a type line's declaration: "T" for the type,
// "T.F" for a field, an embedded field (named by its type's last element)
// or an interface method.
func typeKey(decl string) string {
	name := identPrefix(decl)
	rest := skipBrackets(decl[len(name):])
	if member, ok := strings.CutPrefix(rest, " struct, "); ok {
		if typ, ok := strings.CutPrefix(member, "embedded "); ok {
			typ = strings.TrimLeft(typ, "*")
			if i := strings.IndexByte(typ, '['); i >= 0 {
				typ = typ[:i]
			}
			if i := strings.LastIndexByte(typ, '.'); i >= 0 {
				typ = typ[i+1:]
			}
			return name + "." + identPrefix(typ)
		}
		return name + "." + identPrefix(member)
	}
	if member, ok := strings.CutPrefix(rest, " interface, "); ok {
		return name + "." + identPrefix(member)
	}
	return name
}

// skipBrackets returns s after its leading balanced "[...]", if any.
func skipBrackets(s string) string {
	if !strings.HasPrefix(s, "[") {
		return s
	}
	depth := 0
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return s[i+1:]
			}
		}
	}
	return s
}

// identPrefix returns the identifier s starts with.
func identPrefix(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f)
	})
	if i < 0 {
		return s
	}
	return s[:i]
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (r report) String() string {
	var b strings.Builder
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s:\n", title)
		for _, l := range lines {
			fmt.Fprintf(&b, "\t%s\n", l)
		}
	}
	section("removed or changed, not named under \"### Breaking\" in CHANGELOG.md's \"## Unreleased\"", r.broken)
	section("in the code but not recorded (go run ./internal/apigate -write)", r.unrecorded)
	section("recorded as added but not in the code (go run ./internal/apigate -write)", r.stale)
	return b.String()
}
