package pluginpkg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// String names the kind as messages do ("got string").
func (k kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// node is one decoded JSON value. Objects keep their members in document
// order, duplicates included, so that problems can be reported in the order
// they appear.
type node struct {
	kind    kind
	text    string // string value, or a number's literal text
	boolean bool
	elems   []*node
	members []member
	// notUTF8 is, for a string, the input offset of the first byte of its
	// literal that is not UTF-8, or -1 when the literal is valid UTF-8.
	// It is unused for other kinds.
	notUTF8 int
}

// member is one key of an object. dupOf is the index of the first member with
// the same key, or -1. When the key's literal is not valid UTF-8, key holds
// its raw bytes (so that the field path shows them) and keyNotUTF8 the
// offset of the first invalid one; keyNotUTF8 is -1 otherwise.
type member struct {
	key        string
	val        *node
	offset     int64 // input offset just after the key
	dupOf      int
	keyNotUTF8 int
}

// lineIndex converts byte offsets into 1-based line and column numbers.
// Columns count runes, as editors do.
type lineIndex struct {
	data   []byte
	starts []int // offset of the first byte of each line
}

func newLineIndex(data []byte) *lineIndex {
	li := &lineIndex{data: data, starts: []int{0}}
	for i, c := range data {
		if c == '\n' {
			li.starts = append(li.starts, i+1)
		}
	}
	return li
}

// line returns the line of the byte at offset off, in O(log lines).
func (li *lineIndex) line(off int) int {
	off = max(0, min(off, len(li.data)))
	return sort.SearchInts(li.starts, off+1) // lines starting at or before off
}

// position returns the line and column of the byte at offset off.
func (li *lineIndex) position(off int) (line, col int) {
	off = max(0, min(off, len(li.data)))
	line = li.line(off)
	return line, utf8.RuneCount(li.data[li.starts[line-1]:off]) + 1
}

// decodeTree decodes data into a tree of nodes. A syntax error is returned as
// a message with its line and column.
func decodeTree(data []byte, li *lineIndex) (*node, string) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, "manifest is empty"
	}
	// json.Unmarshal validates the whole input first, reporting the exact
	// offset of the first syntax error (the streaming Decoder does not).
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if !errors.As(err, &se) {
			return nil, "invalid JSON: " + err.Error()
		}
		off := int(se.Offset) - 1 // the offending byte
		if se.Offset >= int64(len(data)) && se.Error() == "unexpected end of JSON input" {
			off = len(data)
		}
		line, col := li.position(off)
		return nil, fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, syntaxMessage(se, data, off))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	r := &treeReader{dec: dec}
	if !utf8.Valid(data) {
		r.data = data // only then are string literals checked one by one
	}
	n, err := r.node()
	if err != nil { // unreachable: the input was validated above
		return nil, "invalid JSON: " + err.Error()
	}
	return n, ""
}

// treeReader reads a tree of nodes from dec. data is the whole input when it
// is not valid UTF-8, nil otherwise: encoding/json replaces invalid bytes in
// strings with U+FFFD, so each string literal is checked in data instead.
type treeReader struct {
	dec  *json.Decoder
	data []byte
}

// token reads the next token and returns, for a string whose literal is not
// valid UTF-8, its raw text and the offset of its first invalid byte;
// otherwise raw is "" and bad is -1. Outside strings, JSON is ASCII, so any
// invalid byte between the previous token and this one is in this string.
func (r *treeReader) token() (tok json.Token, raw string, bad int, err error) {
	start := r.dec.InputOffset()
	if tok, err = r.dec.Token(); err != nil || r.data == nil {
		return tok, "", -1, err
	}
	if _, ok := tok.(string); !ok {
		return tok, "", -1, nil
	}
	end := int(r.dec.InputOffset())
	open := int(start) + bytes.IndexByte(r.data[start:end], '"') + 1
	lit := r.data[open : end-1] // between the quotes
	for i := 0; i < len(lit); {
		c, size := utf8.DecodeRune(lit[i:])
		if c == utf8.RuneError && size == 1 {
			return tok, string(lit), open + i, nil
		}
		i += size
	}
	return tok, "", -1, nil
}

// node reads one value.
func (r *treeReader) node() (*node, error) {
	tok, _, bad, err := r.token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return r.array()
		}
		return r.object()
	case string:
		return &node{kind: kindString, text: t, notUTF8: bad}, nil
	case json.Number:
		return &node{kind: kindNumber, text: string(t)}, nil
	case bool:
		return &node{kind: kindBool, boolean: t}, nil
	default:
		return &node{kind: kindNull}, nil
	}
}

func (r *treeReader) array() (*node, error) {
	n := &node{kind: kindArray}
	for r.dec.More() {
		e, err := r.node()
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, e)
	}
	_, err := r.dec.Token() // ']'
	return n, err
}

func (r *treeReader) object() (*node, error) {
	n := &node{kind: kindObject}
	first := map[string]int{}
	for r.dec.More() {
		tok, raw, bad, err := r.token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if bad >= 0 && !strings.Contains(raw, `\`) {
			key = raw // without escapes, the raw text is the key as written
		}
		m := member{key: key, offset: r.dec.InputOffset(), dupOf: -1, keyNotUTF8: bad}
		if i, ok := first[key]; ok {
			m.dupOf = i
		} else {
			first[key] = len(n.members)
		}
		if m.val, err = r.node(); err != nil {
			return nil, err
		}
		n.members = append(n.members, m)
	}
	_, err := r.dec.Token() // '}'
	return n, err
}

// syntaxMessage returns the decoder's message, naming a non-ASCII offending
// character as the whole rune rather than its first byte, and a byte that is
// not UTF-8 as a byte.
func syntaxMessage(se *json.SyntaxError, data []byte, off int) string {
	msg := se.Error()
	if off < 0 || off >= len(data) || data[off] < utf8.RuneSelf {
		return msg
	}
	r, size := utf8.DecodeRune(data[off:])
	byteChar := "'" + string(rune(data[off])) + "'"
	if r == utf8.RuneError && size == 1 {
		return strings.Replace(msg, "character "+byteChar, fmt.Sprintf("byte 0x%02x (not UTF-8)", data[off]), 1)
	}
	return strings.Replace(msg, byteChar, strconv.QuoteRune(r), 1)
}
