package semverstr

import (
	"testing"

	"github.com/Masterminds/semver/v3"
)

// TestStringIsVersionString: String equals Version.String for strict and
// loose versions, pre-releases, metadata and the largest numbers.
func TestStringIsVersionString(t *testing.T) {
	for _, in := range []string{"0.0.0", "1.0.0", "1.2.3", "10.20.30", "1.0.0-rc.1", "1.0.0+build.5",
		"1.0.0-alpha.1+exp.sha.5114f85", "18446744073709551615.0.1", "v1.2", "1", "1.2.3-0a.b-c"} {
		v, err := semver.NewVersion(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got, want := String(v), v.String(); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzString: for any version semver parses, String equals Version.String.
func FuzzString(f *testing.F) {
	for _, s := range []string{"1.2.3", "1.0.0-rc.1+b", "v2", "0.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, err := semver.NewVersion(in)
		if err != nil {
			return
		}
		if got, want := String(v), v.String(); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	})
}

func BenchmarkString(b *testing.B) {
	v := semver.MustParse("1.20.3-rc.1")
	b.Run("semverstr", func(b *testing.B) {
		for range b.N {
			_ = String(v)
		}
	})
	b.Run("Version.String", func(b *testing.B) {
		for range b.N {
			_ = v.String()
		}
	})
}
