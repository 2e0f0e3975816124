package jsonscan

import (
	"strings"
	"testing"
)

// plainAt is skipPlain's reference, a byte at a time: the first byte at
// or after i a string's scan must look at.
func plainAt(b []byte, i int) int {
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

// TestSkipPlain holds skipPlain to plainAt: it stops at the same byte, or
// at the start of a word of 8 bytes holding it, for every byte that must
// stop it, at every position, around windows' ends too, and at none of
// the plain bytes around them.
func TestSkipPlain(t *testing.T) {
	stops := []byte{'"', '\\', 0x00, 0x1f, 0x0a, 0x80, 0xff}
	plains := []byte{' ', '!', '#', ']', 'x', 0x7f}
	for _, stop := range stops {
		for _, plain := range plains {
			for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 24, 1023, 1024, 1025, 2060} {
				for at := -1; at < n; at++ {
					if n > 24 && at > 16 && at < n-24 && at%197 != 0 && (at < 1016 || at > 1032) {
						continue // a sample of the long ones
					}
					b := []byte(strings.Repeat(string(plain), n))
					if at >= 0 {
						b[at] = stop
					}
					for from := 0; from <= n; from += 1 + from/16 {
						got, want := skipPlain(b, from), plainAt(b, from)
						if got > want || (got < want && (got+8 > len(b) || plainAt(b[:got+8], got) == got+8)) {
							t.Fatalf("skipPlain(%q, %d) = %d, want %d (or a word holding it)", b, from, got, want)
						}
					}
				}
			}
		}
	}
}
