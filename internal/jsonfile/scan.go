package jsonfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"sync"
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
//
// It allocates little, for a host loads every installed manifest at each
// start: nodes come from slabs (newNode), a literal without escapes is a
// substring of one copy of the input (text: the tree's strings keep that
// copy, no larger than the input, alive), and an object's members and
// an array's elements are gathered on a stack shared by the whole tree
// and copied once, at the exact size, when the container closes.
type treeScanner struct {
	data []byte
	text string // data as a string
	pos  int
	// nodes is the current slab, left is an upper bound of the nodes
	// still to come (a value begins the text, follows '[' or '{', or
	// follows ','), so the slabs hold no more than the tree needs unless
	// strings hold those bytes too.
	nodes []Node
	left  int
	// elems and members are the stacks of the arrays' elements and the
	// objects' members being read.
	elems   []*Node
	members []Member
}

// scanners keeps treeScanners for reuse, so that their stacks are not
// grown again for every text.
var scanners = sync.Pool{New: func() any { return new(treeScanner) }}

// parseValid returns the tree of data, which json.Valid accepted.
func parseValid(data []byte) (*Node, error) {
	r := scanners.Get().(*treeScanner)
	r.data, r.text, r.pos = data, string(data), 0
	r.left = 1 + bytes.Count(data, []byte{','}) + bytes.Count(data, []byte{'['}) + bytes.Count(data, []byte{'{'})
	n, err := r.value()
	// Keep the stacks' capacity (each container cleared what it pushed),
	// not the text or the slab.
	*r = treeScanner{elems: r.elems[:0], members: r.members[:0]}
	if cap(r.elems)+cap(r.members) <= maxPooledStack {
		scanners.Put(r)
	}
	return n, err
}

// maxPooledStack bounds the stack capacity a pooled treeScanner keeps: one
// that read a huge text is dropped rather than kept.
const maxPooledStack = 1 << 12

// maxSlab bounds the nodes of one slab.
const maxSlab = 256

// newNode returns a new node of kind k from the current slab.
func (r *treeScanner) newNode(k Kind) *Node {
	if len(r.nodes) == cap(r.nodes) {
		r.nodes = make([]Node, 0, min(max(r.left, 1), maxSlab))
	}
	r.left--
	r.nodes = append(r.nodes, Node{Kind: k})
	return &r.nodes[len(r.nodes)-1]
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
			n = r.newNode(KindString)
			n.Text, n.NotUTF8 = text, bad
		}
	case c == 't' || c == 'f' || c == 'n':
		n, err = r.literal(c)
	default:
		end := r.pos
		for end < len(r.data) && isNumberByte(r.data[end]) {
			end++
		}
		n = r.newNode(KindNumber)
		n.Text, r.pos = r.text[r.pos:end], end
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
	word, kind := "null", KindNull
	switch c {
	case 't':
		word, kind = "true", KindBool
	case 'f':
		word, kind = "false", KindBool
	}
	if len(r.data)-r.pos < len(word) || r.text[r.pos:r.pos+len(word)] != word {
		return nil, errScan
	}
	r.pos += len(word)
	n := r.newNode(kind)
	n.Bool = c == 't'
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
		return r.text[start+1 : i], -1, nil
	}
	var decoded string // declared here: its address escapes
	if err := json.Unmarshal(r.data[start:r.pos], &decoded); err != nil {
		return "", -1, err
	}
	return decoded, bad, nil
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

// linearKeys is how many members an object may have before its
// duplicate keys are found with a map rather than by comparing each key
// with those before it.
const linearKeys = 16

func (r *treeScanner) array() (*Node, error) {
	n := r.newNode(KindArray)
	base := len(r.elems)
	err := r.elements(']', func() error {
		e, err := r.value()
		if err != nil {
			return err
		}
		r.elems = append(r.elems, e)
		return nil
	})
	n.Elems = pop(&r.elems, base)
	if err != nil {
		return nil, err
	}
	return n, nil
}

func (r *treeScanner) object() (*Node, error) {
	n := r.newNode(KindObject)
	base := len(r.members)
	var first map[string]int // once the object has linearKeys members
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
		m := Member{Key: key, Offset: r.pos, KeyNotUTF8: bad}
		first, m.DupOf = r.firstKey(base, first, key)
		if r.next() != ':' {
			return errScan
		}
		r.pos++
		if m.Val, err = r.value(); err != nil {
			return err
		}
		r.members = append(r.members, m)
		return nil
	})
	n.Members = pop(&r.members, base)
	if err != nil {
		return nil, err
	}
	return n, nil
}

// pop removes from *stack the entries a container pushed since base,
// clearing them so that the pooled stack keeps no pointer into the tree,
// and returns them copied at their exact size (nil when there are none).
func pop[T any](stack *[]T, base int) []T {
	var out []T
	if len(*stack) > base {
		out = slices.Clone((*stack)[base:])
	}
	clear((*stack)[base:])
	*stack = (*stack)[:base]
	return out
}

// firstKey returns the index of the first member named key of the object
// whose members so far are members[base:], or -1 when there is none; the
// object's map of first keys, made once it has linearKeys members, is
// first (nil before), which firstKey returns updated with key.
func (r *treeScanner) firstKey(base int, first map[string]int, key string) (map[string]int, int) {
	have := r.members[base:]
	if first != nil {
		if i, ok := first[key]; ok {
			return first, i
		}
		first[key] = len(have)
		return first, -1
	}
	dup := -1
	for i := range have {
		if have[i].Key == key {
			dup = i
			break
		}
	}
	if len(have)+1 >= linearKeys {
		first = make(map[string]int, 2*linearKeys)
		for i := range have {
			if have[i].DupOf < 0 {
				first[have[i].Key] = i
			}
		}
		if dup < 0 {
			first[key] = len(have)
		}
	}
	return first, dup
}
