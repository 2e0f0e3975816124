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
	Bool bool
	// Text is a string's value, or a number's literal text.
	Text string
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
	if !json.Valid(data) {
		// json.Unmarshal reports the exact offset of the first syntax
		// error (the streaming Decoder does not).
		var raw json.RawMessage
		err := json.Unmarshal(data, &raw)
		var se *json.SyntaxError
		if !errors.As(err, &se) {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		return nil, syntaxError(se, data, lines)
	}
	n, err := parseValid(data)
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
