package jsonfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kind is the JSON type of a Node.
type Kind uint8

// The JSON types.
const (
	KindNull Kind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// String names the kind as messages do ("got string").
func (k Kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// Node is one decoded JSON value. Objects keep their members in document
// order, duplicates included, so that problems can be reported in the order
// they appear.
type Node struct {
	Kind Kind
	// Text is a string's value, or a number's literal text.
	Text string
	Bool bool
	// Elems are an array's elements.
	Elems []*Node
	// Members are an object's members, in document order.
	Members []Member
	// NotUTF8 is, for a string, the input offset of the first byte of its
	// literal that is not UTF-8, or -1 when the literal is valid UTF-8. It
	// is unused for other kinds.
	NotUTF8 int
	// Start and End delimit the value's text in the input.
	Start, End int
}

// Member is one key of an object. DupOf is the index of the first member
// with the same key, or -1. When the key's literal is not valid UTF-8, Key
// holds its raw bytes (so that a field path shows them) and KeyNotUTF8 the
// offset of the first invalid one; KeyNotUTF8 is -1 otherwise.
type Member struct {
	Key string
	Val *Node
	// Offset is the input offset just after the key.
	Offset     int
	DupOf      int
	KeyNotUTF8 int
}

// ErrEmpty is Parse's error for an input holding nothing but white space.
var ErrEmpty = errors.New("empty input")

// SyntaxError is invalid JSON, located at the offending byte.
type SyntaxError struct {
	// Offset is the offending byte's offset (the input's length when the
	// input ends too early); Line and Column locate it.
	Offset, Line, Column int
	// Msg is encoding/json's message, naming a non-ASCII character as a
	// whole rune and a byte that is not UTF-8 as a byte.
	Msg string
	// Err is encoding/json's error.
	Err error
}

// Error formats the error as "invalid JSON at line L, column C: msg".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Unwrap returns encoding/json's error.
func (e *SyntaxError) Unwrap() error { return e.Err }

// Parse decodes data, which must hold exactly one JSON value, into a tree
// of Nodes. It returns ErrEmpty for an empty input and a *SyntaxError for
// invalid JSON (data after the value included). lines indexes data.
func Parse(data []byte, lines *Lines) (*Node, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, ErrEmpty
	}
	// json.Unmarshal validates the whole input first, reporting the exact
	// offset of the first syntax error (the streaming Decoder does not).
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if !errors.As(err, &se) {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		return nil, syntaxError(se, data, lines)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	r := &treeReader{dec: dec, data: data, checkUTF8: !utf8.Valid(data)}
	n, err := r.node()
	if err != nil { // unreachable: the input was validated above
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return n, nil
}

// syntaxError locates se in data.
func syntaxError(se *json.SyntaxError, data []byte, lines *Lines) *SyntaxError {
	off := int(se.Offset) - 1 // Offset is just past the offending byte
	if se.Offset >= int64(len(data)) && se.Error() == "unexpected end of JSON input" {
		off = len(data)
	}
	line, col := lines.Position(off)
	return &SyntaxError{Offset: off, Line: line, Column: col, Msg: syntaxMessage(se, data, off), Err: se}
}

// treeReader reads a tree of nodes from dec, which reads data. When
// checkUTF8 is set (data is not valid UTF-8), each string literal is
// checked in data, since encoding/json replaces invalid bytes in strings
// with U+FFFD.
type treeReader struct {
	dec       *json.Decoder
	data      []byte
	checkUTF8 bool
}

// token reads the next token and returns the offset where its text starts
// and, for a string whose literal is not valid UTF-8, its raw text and the
// offset of its first invalid byte; otherwise raw is "" and bad is -1.
// Outside strings, JSON is ASCII, so any invalid byte between the previous
// token and this one is in this string.
func (r *treeReader) token() (tok json.Token, start int, raw string, bad int, err error) {
	start = int(r.dec.InputOffset())
	if tok, err = r.dec.Token(); err != nil {
		return tok, start, "", -1, err
	}
	for start < len(r.data) && strings.IndexByte(" \t\r\n,:", r.data[start]) >= 0 {
		start++
	}
	if _, ok := tok.(string); !ok || !r.checkUTF8 {
		return tok, start, "", -1, nil
	}
	end := int(r.dec.InputOffset())
	lit := r.data[start+1 : end-1] // between the quotes
	for i := 0; i < len(lit); {
		c, size := utf8.DecodeRune(lit[i:])
		if c == utf8.RuneError && size == 1 {
			return tok, start, string(lit), start + 1 + i, nil
		}
		i += size
	}
	return tok, start, "", -1, nil
}

// node reads one value.
func (r *treeReader) node() (*Node, error) {
	tok, start, _, bad, err := r.token()
	if err != nil {
		return nil, err
	}
	var n *Node
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			n, err = r.array()
		} else {
			n, err = r.object()
		}
	case string:
		n = &Node{Kind: KindString, Text: t, NotUTF8: bad}
	case json.Number:
		n = &Node{Kind: KindNumber, Text: string(t)}
	case bool:
		n = &Node{Kind: KindBool, Bool: t}
	default:
		n = &Node{Kind: KindNull}
	}
	if err != nil {
		return nil, err
	}
	n.Start, n.End = start, int(r.dec.InputOffset())
	return n, nil
}

func (r *treeReader) array() (*Node, error) {
	n := &Node{Kind: KindArray}
	for r.dec.More() {
		e, err := r.node()
		if err != nil {
			return nil, err
		}
		n.Elems = append(n.Elems, e)
	}
	_, err := r.dec.Token() // ']'
	return n, err
}

func (r *treeReader) object() (*Node, error) {
	n := &Node{Kind: KindObject}
	first := map[string]int{}
	for r.dec.More() {
		tok, _, raw, bad, err := r.token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if bad >= 0 && !strings.Contains(raw, `\`) {
			key = raw // without escapes, the raw text is the key as written
		}
		m := Member{Key: key, Offset: int(r.dec.InputOffset()), DupOf: -1, KeyNotUTF8: bad}
		if i, ok := first[key]; ok {
			m.DupOf = i
		} else {
			first[key] = len(n.Members)
		}
		if m.Val, err = r.node(); err != nil {
			return nil, err
		}
		n.Members = append(n.Members, m)
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
