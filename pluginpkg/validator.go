package pluginpkg

import (
	"fmt"
	"math"
	"strconv"

	"github.com/extkernel/extkernel/internal/jsonfile"
)

// fieldPath is a JSON field path as shown in messages: "runtime.env",
// "requires[1].version", `runtime.env["MY VAR"]`.
type fieldPath string

// child returns the path of an object member. Keys that are not plain
// identifiers are quoted in brackets.
func (p fieldPath) child(key string) fieldPath {
	if !plainKey(key) {
		return fieldPath(string(p) + "[" + strconv.Quote(key) + "]")
	}
	if p == "" {
		return fieldPath(key)
	}
	return fieldPath(string(p) + "." + key)
}

// index returns the path of an array element.
func (p fieldPath) index(i int) fieldPath {
	return fieldPath(string(p) + "[" + strconv.Itoa(i) + "]")
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '$') {
			return false
		}
	}
	return true
}

// validator collects problems while walking a decoded manifest.
type validator struct {
	li       *jsonfile.Lines
	problems []FieldError
}

func (v *validator) add(f fieldPath, format string, args ...any) {
	v.problems = append(v.problems, FieldError{Field: string(f), Message: fmt.Sprintf(format, args...)})
}

// typeError reports that n at f is not of the wanted type.
func (v *validator) typeError(f fieldPath, want string, n *jsonfile.Node) {
	v.add(f, "must be %s, got %s", want, n.Kind)
}

// field describes one member of an object schema. check is called with the
// member's path and value; it reports its own problems.
type field struct {
	name     string
	required bool
	check    func(f fieldPath, n *jsonfile.Node)
}

// object checks that n is an object and dispatches its members to fields in
// document order. Unknown and duplicate keys are reported; missing required
// fields are reported after the members, in schema order. It returns false
// when n is not an object.
func (v *validator) object(f fieldPath, n *jsonfile.Node, fields []field) bool {
	if n.Kind != jsonfile.KindObject {
		v.typeError(f, "an object", n)
		return false
	}
	seen := make([]bool, len(fields))
	for _, m := range n.Members {
		mf := f.child(m.Key)
		if v.badKey(mf, m) || v.duplicate(mf, n, m) {
			continue
		}
		i := fieldIndex(fields, m.Key)
		if i < 0 {
			v.unknown(mf, m.Key, fields)
			continue
		}
		seen[i] = true
		fields[i].check(mf, m.Val)
	}
	for i, fd := range fields {
		if fd.required && !seen[i] {
			v.add(f.child(fd.name), "required field is missing")
		}
	}
	return true
}

// duplicate reports m at f when it repeats an earlier key of object n.
func (v *validator) duplicate(f fieldPath, n *jsonfile.Node, m jsonfile.Member) bool {
	if m.DupOf < 0 {
		return false
	}
	first := v.li.Line(n.Members[m.DupOf].Offset)
	v.add(f, "duplicate key at line %d (first at line %d)", v.li.Line(m.Offset), first)
	return true
}

func fieldIndex(fields []field, name string) int {
	for i, fd := range fields {
		if fd.name == name {
			return i
		}
	}
	return -1
}

// unknown reports an unknown field, suggesting the closest known name when
// one is near enough to be a typo.
func (v *validator) unknown(f fieldPath, key string, fields []field) {
	best, bestDist := "", 3
	if len(key) <= 3 {
		bestDist = 2
	}
	for _, fd := range fields {
		if d := editDistance(key, fd.name); d < bestDist {
			best, bestDist = fd.name, d
		}
	}
	if best != "" {
		v.add(f, "unknown field (did you mean %q?)", best)
		return
	}
	v.add(f, "unknown field")
}

// editDistance is the Levenshtein distance between a and b, capped: inputs
// longer than 64 bytes are never close to a field name.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func (v *validator) str(f fieldPath, n *jsonfile.Node) (string, bool) {
	if n.Kind != jsonfile.KindString {
		v.typeError(f, "a string", n)
		return "", false
	}
	if n.NotUTF8 >= 0 {
		v.notUTF8(f, "", n.NotUTF8)
		return "", false
	}
	return n.Text, true
}

// notUTF8 reports the byte at offset off, which is not UTF-8, in the string
// at f (what is "key " for an object key, "" for a value).
func (v *validator) notUTF8(f fieldPath, what string, off int) {
	line, col := v.li.Position(off)
	v.add(f, "%scontains a byte that is not UTF-8 (0x%02x at line %d, column %d); a manifest must be UTF-8",
		what, v.li.Byte(off), line, col)
}

// badKey reports m at f when its key is not UTF-8.
func (v *validator) badKey(f fieldPath, m jsonfile.Member) bool {
	if m.KeyNotUTF8 < 0 {
		return false
	}
	v.notUTF8(f, "key ", m.KeyNotUTF8)
	return true
}

func (v *validator) boolean(f fieldPath, n *jsonfile.Node) (bool, bool) {
	if n.Kind != jsonfile.KindBool {
		v.typeError(f, "a boolean", n)
		return false, false
	}
	return n.Bool, true
}

// integer returns n as an int64. A number with a fraction is reported; an
// integer too large for int64 is returned with inRange false and no problem
// reported, so that the caller can say which range it wanted.
func (v *validator) integer(f fieldPath, n *jsonfile.Node) (val int64, inRange, ok bool) {
	if n.Kind != jsonfile.KindNumber {
		v.typeError(f, "an integer", n)
		return 0, false, false
	}
	if i, err := strconv.ParseInt(n.Text, 10, 64); err == nil {
		return i, true, true
	}
	// JSON Schema counts 1.0 and 1e2 as integers; so do we.
	fl, err := strconv.ParseFloat(n.Text, 64)
	if err == nil && fl != math.Trunc(fl) {
		v.add(f, "must be an integer, got %s", n.Text)
		return 0, false, false
	}
	if err != nil || math.Abs(fl) >= 1<<53 {
		return 0, false, true
	}
	return int64(fl), true, true
}

// strings checks that n is an array of strings and returns the ones that are.
func (v *validator) strings(f fieldPath, n *jsonfile.Node) ([]string, bool) {
	if n.Kind != jsonfile.KindArray {
		v.typeError(f, "an array of strings", n)
		return nil, false
	}
	out := make([]string, 0, len(n.Elems))
	ok := true
	for i, e := range n.Elems {
		s, good := v.str(f.index(i), e)
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}
