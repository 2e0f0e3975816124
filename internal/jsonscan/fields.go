package jsonscan

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Field is one member of a flat object DecodeFields decodes. Exactly one
// of Str, Raw and Num is set: a string, a raw JSON value (which aliases the
// input), or an integer (set to a new int).
type Field struct {
	Key string
	Str *string
	Raw *json.RawMessage
	Num **int
}

// DecodeFields decodes data, which must be one JSON object whose members
// are all among fields (keys spelled exactly, each at most once, no null
// value, no escape or non-ASCII byte in a string), and reports whether it
// could. Raw values alias data; a string equal to one of known (the
// protocol's version and method names) is set without allocating. On
// false, the fields may have been written; the caller then decodes with
// encoding/json.
func DecodeFields(data []byte, known []string, fields []Field) bool {
	i, empty, ok := openList(data, '{', '}')
	if !ok || empty {
		return ok
	}
	var seen uint32
	for {
		key, vs, ve, ok := member(data, i)
		if !ok || data[vs] == 'n' { // null: encoding/json's rules per type
			return false
		}
		n := -1
		for j := range fields {
			if fields[j].Key == string(key) {
				n = j
				break
			}
		}
		if n < 0 || seen&(1<<n) != 0 || !fields[n].set(data[vs:ve], known) {
			return false
		}
		seen |= 1 << n
		var done bool
		if i, done, ok = nextItem(data, ve, '}'); !ok || done {
			return ok
		}
	}
}

// set stores val, one scanned JSON value, in the field, and reports
// whether its type fits.
func (f *Field) set(val []byte, known []string) bool {
	switch {
	case f.Str != nil:
		s, ok := plainString(val, known)
		if ok {
			*f.Str = s
		}
		return ok
	case f.Num != nil:
		// Digits only: a fraction or exponent is json.Unmarshal's to
		// refuse, and out-of-range values Atoi's.
		if bytes.ContainsAny(val, ".eE") {
			return false
		}
		v, err := strconv.Atoi(string(val))
		if err != nil {
			return false
		}
		*f.Num = &v
	default:
		*f.Raw = val[:len(val):len(val)]
	}
	return true
}

// openList reads the opening byte of the object or array data must hold
// (with nothing after its end, which nextItem checks). It returns the
// index of the first item, or empty for {} or [].
func openList(data []byte, opening, closing byte) (i int, empty, ok bool) {
	i = skipSpace(data, 0)
	if i >= len(data) || data[i] != opening {
		return 0, false, false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == closing {
		return 0, true, skipSpace(data, i+1) == len(data)
	}
	return i, false, true
}

// nextItem reads what follows an item of a list ending at end: a comma,
// then it returns the next item's index, or the closing byte, then done
// (ok only when nothing follows the list).
func nextItem(data []byte, end int, closing byte) (i int, done, ok bool) {
	i = skipSpace(data, end)
	if i >= len(data) {
		return 0, false, false
	}
	switch data[i] {
	case ',':
		return skipSpace(data, i+1), false, true
	case closing:
		return 0, true, skipSpace(data, i+1) == len(data)
	}
	return 0, false, false
}

// member reads the object member at data[i]: a key without escapes or
// non-ASCII bytes, a colon and a value, which spans data[vs:ve].
func member(data []byte, i int) (key []byte, vs, ve int, ok bool) {
	ke, special := scanString(data, i)
	if ke < 0 || special {
		return nil, 0, 0, false
	}
	j := skipSpace(data, ke)
	if j >= len(data) || data[j] != ':' {
		return nil, 0, 0, false
	}
	vs = skipSpace(data, j+1)
	if ve, _ = scanValue(data, vs); ve < 0 {
		return nil, 0, 0, false
	}
	return data[i+1 : ke-1], vs, ve, true
}

// plainString returns the string a JSON string without escapes or
// non-ASCII bytes holds; one of known is returned without allocating.
func plainString(val []byte, known []string) (string, bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", false
	}
	end, special := scanString(val, 0)
	if end != len(val) || special {
		return "", false
	}
	s := val[1 : len(val)-1]
	for _, k := range known {
		if string(s) == k {
			return k, true
		}
	}
	return string(s), true
}

// DecodeList decodes data, a JSON array of flat objects whose members
// fields lists for each element (see DecodeFields), into a new slice
// (empty, not nil, for [], as json.Unmarshal makes it), and reports
// whether it could; nil data leaves list alone.
func DecodeList[T any](data []byte, list *[]T, fields func(*T) []Field) bool {
	if data == nil {
		return true
	}
	i, empty, ok := openList(data, '[', ']')
	if !ok {
		return false
	}
	*list = []T{}
	if empty {
		return true
	}
	for {
		end, _ := scanValue(data, i)
		var d T
		if end < 0 || !DecodeFields(data[i:end], nil, fields(&d)) {
			return false
		}
		*list = append(*list, d)
		var done bool
		if i, done, ok = nextItem(data, end, ']'); !ok || done {
			return ok
		}
	}
}

// DecodeStringMap decodes an object of strings without escapes or
// non-ASCII bytes into a new map, a later duplicate key replacing the
// earlier as in json.Unmarshal, and reports whether it could.
func DecodeStringMap(data []byte, m *map[string]string) bool {
	i, empty, ok := openList(data, '{', '}')
	if !ok {
		return false
	}
	*m = map[string]string{}
	if empty {
		return true
	}
	for {
		key, vs, ve, ok := member(data, i)
		if !ok {
			return false
		}
		v, ok := plainString(data[vs:ve], nil)
		if !ok {
			return false
		}
		(*m)[string(key)] = v
		var done bool
		if i, done, ok = nextItem(data, ve, '}'); !ok || done {
			return ok
		}
	}
}
