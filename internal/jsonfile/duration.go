package jsonfile

import (
	"fmt"
	"strings"
	"time"
)

// Duration is a positive duration written as a Go duration string, such
// as "150ms", "3s" or "1m30s". It unmarshals from such a string (refusing
// zero and negative durations) and marshals back to the shortest one.
type Duration time.Duration

// UnmarshalText parses a positive duration.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil || v <= 0 {
		return fmt.Errorf("%q is not a positive duration such as \"5s\"", text)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes d as String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// String formats d as time.Duration does, without zero trailing units:
// "2m" rather than "2m0s", "1h" rather than "1h0m0s".
func (d Duration) String() string {
	s := time.Duration(d).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// JSONDescription names what a Duration accepts, for type errors.
func (Duration) JSONDescription() string { return `a duration string such as "5s"` }
