// Package ident holds the one grammar shared by every dotted identifier in
// extkernel: capability keys, interceptor points and strategy slots.
//
// Grammar (documented in docs/manifest.md):
//
//	id      = segment *( "." segment )
//	segment = ( lower / digit ) *( lower / digit / "_" / "-" )
//
// An identifier is at most MaxLen bytes long. It never contains whitespace,
// upper-case letters, empty segments, or a leading or trailing dot.
package ident

import (
	"fmt"
	"strconv"
)

// MaxLen is the maximum length in bytes of a dotted identifier.
const MaxLen = 128

// ValidateDotted reports whether s follows the dotted-identifier grammar. The
// returned error describes the first violation in a sentence that can follow
// a field path, e.g. `"Tool.Before" is not a valid point: segment 1 ("Tool")
// must start with a lower-case letter or digit`. kind names the identifier
// ("point", "slot", "capability key") in the message.
func ValidateDotted(kind, s string) error {
	if s == "" {
		return fmt.Errorf("%s must not be empty", kind)
	}
	if len(s) > MaxLen {
		return fmt.Errorf("%q is not a valid %s: longer than %d bytes", s, kind, MaxLen)
	}
	seg, start := 1, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			continue
		}
		if err := validSegment(s[start:i]); err != "" {
			return fmt.Errorf("%q is not a valid %s: segment %d (%s) %s", s, kind, seg, strconv.Quote(s[start:i]), err)
		}
		seg++
		start = i + 1
	}
	return nil
}

func validSegment(seg string) string {
	if seg == "" {
		return "is empty"
	}
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		case c == '_' || c == '-':
			return "must start with a lower-case letter or digit"
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return "contains whitespace"
		case c >= 'A' && c <= 'Z':
			return "contains an upper-case letter (identifiers are lower-case)"
		default:
			return fmt.Sprintf("contains %q (allowed: a-z, 0-9, '_', '-')", rune(c))
		}
	}
	return ""
}
