package jsonfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// errScan is treeScanner's error for input that is not the valid JSON
// Parse checked it to be (unreachable).
var errScan = errors.New("unexpected input")

// treeScanner builds the tree of a JSON text already known to be valid
// (json.Valid), in one pass over its bytes: the structure, offsets and
// literals are read directly, and only a string with an escape or a byte
// that is not UTF-8 is decoded by encoding/json, so every value is what
// encoding/json makes of it (an invalid byte becomes U+FFFD, and the
// node records where it was). It replaces a reader over json.Decoder's
// Token, which allocated per token and made parsing a manifest ~30 µs.
type treeScanner struct {
	data []byte
	pos  int
}

// skip moves past white space.
func (r *treeScanner) skip() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\r', '\n':
			r.pos++
		default:
			return
		}
	}
}

// value reads one value, starting at the next non-space byte.
func (r *treeScanner) value() (*Node, error) {
	r.skip()
	if r.pos >= len(r.data) {
		return nil, errScan
	}
	start := r.pos
	var n *Node
	var err error
	switch c := r.data[r.pos]; {
	case c == '{':
		n, err = r.object()
	case c == '[':
		n, err = r.array()
	case c == '"':
		var text string
		var bad int
		if text, bad, err = r.str(); err == nil {
			n = &Node{Kind: KindString, Text: text, NotUTF8: bad}
		}
	case c == 't' || c == 'f' || c == 'n':
		n, err = r.literal(c)
	default:
		end := r.pos
		for end < len(r.data) && isNumberByte(r.data[end]) {
			end++
		}
		n, r.pos = &Node{Kind: KindNumber, Text: string(r.data[r.pos:end])}, end
	}
	if err != nil {
		return nil, err
	}
	n.Start, n.End = start, r.pos
	return n, nil
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// literal reads true, false or null, whose first byte is c.
func (r *treeScanner) literal(c byte) (*Node, error) {
	word, n := "null", &Node{Kind: KindNull}
	switch c {
	case 't':
		word, n = "true", &Node{Kind: KindBool, Bool: true}
	case 'f':
		word, n = "false", &Node{Kind: KindBool}
	}
	if len(r.data)-r.pos < len(word) || string(r.data[r.pos:r.pos+len(word)]) != word {
		return nil, errScan
	}
	r.pos += len(word)
	return n, nil
}

// str reads a string literal at pos and returns its value, and the
// offset of its first byte that is not UTF-8 (-1 when none).
func (r *treeScanner) str() (text string, bad int, err error) {
	start := r.pos
	escaped, ascii := false, true
	i := start + 1
	for ; i < len(r.data) && r.data[i] != '"'; i++ {
		switch c := r.data[i]; {
		case c == '\\':
			escaped = true
			i++ // the escaped byte; \uXXXX's digits are plain bytes
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	if i >= len(r.data) {
		return "", -1, errScan
	}
	r.pos = i + 1
	lit := r.data[start+1 : i]
	bad = -1
	if !ascii {
		for j := 0; j < len(lit); {
			c, size := utf8.DecodeRune(lit[j:])
			if c == utf8.RuneError && size == 1 {
				bad = start + 1 + j
				break
			}
			j += size
		}
	}
	if !escaped && bad < 0 {
		return string(lit), -1, nil
	}
	if err := json.Unmarshal(r.data[start:r.pos], &text); err != nil {
		return "", -1, err
	}
	return text, bad, nil
}

// next moves past white space and returns the byte there (0 at the end).
func (r *treeScanner) next() byte {
	r.skip()
	if r.pos >= len(r.data) {
		return 0
	}
	return r.data[r.pos]
}

// elements reads the elements of the array or object whose opening byte
// is at pos, calling each for every one, and moves past its close.
func (r *treeScanner) elements(close byte, each func() error) error {
	r.pos++ // '[' or '{'
	if r.next() == close {
		r.pos++
		return nil
	}
	for {
		if err := each(); err != nil {
			return err
		}
		switch r.next() {
		case ',':
			r.pos++
		case close:
			r.pos++
			return nil
		default:
			return errScan
		}
	}
}

func (r *treeScanner) array() (*Node, error) {
	n := &Node{Kind: KindArray}
	err := r.elements(']', func() error {
		e, err := r.value()
		if err != nil {
			return err
		}
		n.Elems = append(n.Elems, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

func (r *treeScanner) object() (*Node, error) {
	n := &Node{Kind: KindObject}
	var first map[string]int
	err := r.elements('}', func() error {
		if r.next() != '"' {
			return errScan
		}
		keyStart := r.pos
		key, bad, err := r.str()
		if err != nil {
			return err
		}
		if raw := r.data[keyStart+1 : r.pos-1]; bad >= 0 && bytes.IndexByte(raw, '\\') < 0 {
			key = string(raw) // without escapes, the raw text is the key as written
		}
		m := Member{Key: key, Offset: r.pos, DupOf: -1, KeyNotUTF8: bad}
		if i, ok := first[key]; ok {
			m.DupOf = i
		} else {
			if first == nil {
				first = map[string]int{}
			}
			first[key] = len(n.Members)
		}
		if r.next() != ':' {
			return errScan
		}
		r.pos++
		if m.Val, err = r.value(); err != nil {
			return err
		}
		n.Members = append(n.Members, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}
