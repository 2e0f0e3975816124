package jsonscan

// The validating scanner. It accepts exactly the JSON grammar of RFC 8259
// as encoding/json does (no UTF-8 check inside strings, like
// encoding/json's scanner), or refuses: a refusal is never an error by
// itself, the caller then decodes with encoding/json, whose answer (a
// value or an error) is authoritative. So the scanner may refuse valid
// input it does not handle (nesting deeper than MaxDepth) but MUST
// never accept invalid input; FuzzScan checks it against encoding/json.

import (
	"bytes"
	"encoding/binary"
)

// MaxDepth bounds the nesting the scanner follows: a deeper value is
// refused, and so left to encoding/json.
const MaxDepth = 64

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F') }

// skipSpace returns the index of the first non-space byte of b at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// scanString returns the end (one past the closing quote) of the string
// starting at b[i], and whether it holds an escape or a byte outside
// ASCII; end is -1 when b[i:] does not start with a valid string.
func scanString(b []byte, i int) (end int, special bool) {
	if i >= len(b) || b[i] != '"' {
		return -1, false
	}
	for i++; i < len(b); {
		i = skipPlain(b, i)
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, special
		case c < 0x20:
			return -1, false
		case c == '\\':
			special = true
			if i+1 >= len(b) {
				return -1, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return -1, false
				}
				i += 6
			default:
				return -1, false
			}
		default:
			if c >= 0x80 {
				special = true
			}
			i++
		}
	}
	return -1, false
}

// Masks of skipPlain's word at a time test, one byte per lane.
const (
	lanes1    = 0x0101010101010101
	lanesHigh = 0x8080808080808080
)

// skipPlain returns the index of the first byte of b at or after i that
// a string's scan must look at (a quote, a backslash, a control
// character or a byte outside ASCII), or an index before it (the start of
// the 8 bytes holding a control character or a byte outside ASCII), so
// that a long plain string (a chunk of a stream) is scanned at memory
// speed: in windows that start at 256 bytes and double while they hold
// nothing to look at, up to 16 KiB (so that a string with many escapes is
// not searched far ahead after each one, and a long plain one costs few
// calls), the next quote and backslash are found by bytes.IndexByte, and
// the bytes before them tested 64, then 8 at a time.
// The test is exact: v has a byte below 0x20 or above 0x7f exactly when
// ((v - 0x20..) | v) & 0x80.. != 0: a byte above 0x7f sets its own high
// bit, a byte below 0x20 borrows into it, and a byte in [0x20, 0x7f]
// neither does nor borrows from the next, so a borrow into a byte's lane
// only ever follows a byte that is itself one of them.
func skipPlain(b []byte, i int) int {
	const firstWindow, maxWindow = 256, 16 << 10
	for window := firstWindow; i < len(b); window = min(2*window, maxWindow) {
		w := b[i:min(i+window, len(b))]
		q := bytes.IndexByte(w, '"')
		if q < 0 {
			q = len(w)
		}
		if k := bytes.IndexByte(w[:q], '\\'); k >= 0 {
			q = k
		}
		j := 0
		for x := w[:q]; len(x) >= 64; x = x[64:] {
			// Eight words a round, tested together (the slice form lets
			// the compiler drop the bounds checks): a plain run costs one
			// branch per 64 bytes; the loop below finds the word.
			v0 := binary.LittleEndian.Uint64(x[0:8])
			v1 := binary.LittleEndian.Uint64(x[8:16])
			v2 := binary.LittleEndian.Uint64(x[16:24])
			v3 := binary.LittleEndian.Uint64(x[24:32])
			v4 := binary.LittleEndian.Uint64(x[32:40])
			v5 := binary.LittleEndian.Uint64(x[40:48])
			v6 := binary.LittleEndian.Uint64(x[48:56])
			v7 := binary.LittleEndian.Uint64(x[56:64])
			a := (v0 - lanes1*0x20) | v0 | (v1 - lanes1*0x20) | v1 | (v2 - lanes1*0x20) | v2 | (v3 - lanes1*0x20) | v3
			b := (v4 - lanes1*0x20) | v4 | (v5 - lanes1*0x20) | v5 | (v6 - lanes1*0x20) | v6 | (v7 - lanes1*0x20) | v7
			if (a|b)&lanesHigh != 0 {
				break
			}
			j += 64
		}
		for ; j+8 <= q; j += 8 {
			if v := binary.LittleEndian.Uint64(w[j:]); ((v-lanes1*0x20)|v)&lanesHigh != 0 {
				return i + j
			}
		}
		for ; j < q; j++ {
			if c := w[j]; c < 0x20 || c >= 0x80 {
				return i + j
			}
		}
		if q < len(w) {
			return i + q
		}
		i += len(w)
	}
	return i
}

// scanNumber returns the end of the number starting at b[i], or -1.
func scanNumber(b []byte, i int) int {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for ; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		for ; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	return i
}

// scanLiteral returns the end of lit at b[i], or -1.
func scanLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanScalar returns the end of the string, number or literal at b[i], or
// -1.
func scanScalar(b []byte, i int) int {
	switch b[i] {
	case '"':
		end, _ := scanString(b, i)
		return end
	case 't':
		return scanLiteral(b, i, "true")
	case 'f':
		return scanLiteral(b, i, "false")
	case 'n':
		return scanLiteral(b, i, "null")
	}
	return scanNumber(b, i)
}

// scanValue returns the end of the JSON value starting at b[i] (no leading
// space), or -1 when there is none or it nests deeper than MaxDepth.
// spaced reports whether the value holds insignificant space (so that
// json.Compact would change it).
func scanValue(b []byte, i int) (end int, spaced bool) {
	var objects uint64 // bit d: the container at depth d is an object
	depth := 0
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return -1, false
		}
		switch b[i] {
		case '{', '[':
			obj := b[i] == '{'
			j := skipSpace(b, i+1)
			spaced = spaced || j > i+1
			if j < len(b) && ((obj && b[j] == '}') || (!obj && b[j] == ']')) {
				i = j + 1
				break
			}
			if depth == MaxDepth {
				return -1, false
			}
			if obj {
				objects |= 1 << depth
			} else {
				objects &^= 1 << depth
			}
			depth++
			if i = j; obj {
				if i, spaced = scanKey(b, i, spaced); i < 0 {
					return -1, false
				}
			}
			continue
		default:
			if i = scanScalar(b, i); i < 0 {
				return -1, false
			}
		}
		// A value ended at b[i]: close containers until one continues.
		for {
			if depth == 0 {
				return i, spaced
			}
			j := skipSpace(b, i)
			spaced = spaced || j > i
			if j >= len(b) {
				return -1, false
			}
			obj := objects&(1<<(depth-1)) != 0
			switch c := b[j]; {
			case c == ',':
				i = skipSpace(b, j+1)
				spaced = spaced || i > j+1
				if obj {
					if i, spaced = scanKey(b, i, spaced); i < 0 {
						return -1, false
					}
				}
			case (obj && c == '}') || (!obj && c == ']'):
				depth--
				i = j + 1
				continue
			default:
				return -1, false
			}
			break
		}
	}
}

// scanKey scans `"key" :` and the space after it, returning the index of
// the member's value, or -1.
func scanKey(b []byte, i int, spaced bool) (int, bool) {
	end, _ := scanString(b, i)
	if end < 0 {
		return -1, false
	}
	j := skipSpace(b, end)
	if j >= len(b) || b[j] != ':' {
		return -1, false
	}
	k := skipSpace(b, j+1)
	return k, spaced || j > end || k > j+1
}
