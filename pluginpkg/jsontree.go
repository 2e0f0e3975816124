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
}

// member is one key of an object. dupOf is the index of the first member with
// the same key, or -1.
type member struct {
	key    string
	val    *node
	offset int64 // input offset just after the key
	dupOf  int
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
	n, err := readNode(dec)
	if err != nil { // unreachable: the input was validated above
		return nil, "invalid JSON: " + err.Error()
	}
	return n, ""
}

// readNode reads one value from dec.
func readNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return readArray(dec)
		}
		return readObject(dec)
	case string:
		return &node{kind: kindString, text: t}, nil
	case json.Number:
		return &node{kind: kindNumber, text: string(t)}, nil
	case bool:
		return &node{kind: kindBool, boolean: t}, nil
	default:
		return &node{kind: kindNull}, nil
	}
}

func readArray(dec *json.Decoder) (*node, error) {
	n := &node{kind: kindArray}
	for dec.More() {
		e, err := readNode(dec)
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, e)
	}
	_, err := dec.Token() // ']'
	return n, err
}

func readObject(dec *json.Decoder) (*node, error) {
	n := &node{kind: kindObject}
	first := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		m := member{key: key, offset: dec.InputOffset(), dupOf: -1}
		if i, ok := first[key]; ok {
			m.dupOf = i
		} else {
			first[key] = len(n.members)
		}
		if m.val, err = readNode(dec); err != nil {
			return nil, err
		}
		n.members = append(n.members, m)
	}
	_, err := dec.Token() // '}'
	return n, err
}

// syntaxMessage returns the decoder's message, naming a non-ASCII offending
// character as the whole rune rather than its first byte.
func syntaxMessage(se *json.SyntaxError, data []byte, off int) string {
	msg := se.Error()
	if off < 0 || off >= len(data) || data[off] < utf8.RuneSelf {
		return msg
	}
	r, _ := utf8.DecodeRune(data[off:])
	byteChar := "'" + string(rune(data[off])) + "'"
	return strings.Replace(msg, byteChar, strconv.QuoteRune(r), 1)
}
