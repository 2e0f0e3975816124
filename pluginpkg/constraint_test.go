package pluginpkg

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

// TestConstraintSyntax pins the constraint syntax docs/manifest.md lists
// ("Versions and constraints"): each form is accepted with the meaning the
// page gives, and the refused forms are refused.
func TestConstraintSyntax(t *testing.T) {
	tests := []struct {
		constraint string
		in, out    []string // versions it admits and refuses
	}{
		{constraint: "1.2.3", in: []string{"1.2.3"}, out: []string{"1.2.4"}},
		{constraint: "=1.2.3", in: []string{"1.2.3"}, out: []string{"1.2.4"}},
		{constraint: "!=1.3.0", in: []string{"1.2.0"}, out: []string{"1.3.0"}},
		{constraint: "1.2", in: []string{"1.2.0", "1.2.9"}, out: []string{"1.3.0"}},
		{constraint: "1.2.x", in: []string{"1.2.9"}, out: []string{"1.3.0"}},
		{constraint: "1.2.*", in: []string{"1.2.9"}, out: []string{"1.3.0"}},
		{constraint: "1.X", in: []string{"1.9.0"}, out: []string{"2.0.0"}},
		{constraint: "*", in: []string{"0.0.1", "9.9.9"}, out: []string{"1.0.0-beta"}},
		{constraint: "~1.2.3", in: []string{"1.2.9"}, out: []string{"1.3.0", "1.2.2"}},
		{constraint: "~1", in: []string{"1.9.0"}, out: []string{"2.0.0"}},
		{constraint: "~>2", in: []string{"2.0.0", "2.9.0"}, out: []string{"3.0.0"}},
		{constraint: "^1.2.3", in: []string{"1.9.0"}, out: []string{"2.0.0", "1.2.2"}},
		{constraint: "^0.2.3", in: []string{"0.2.9"}, out: []string{"0.3.0"}},
		{constraint: ">1.0.0", in: []string{"1.0.1"}, out: []string{"1.0.0"}},
		{constraint: ">=1.0.0", in: []string{"1.0.0"}, out: []string{"0.9.9"}},
		{constraint: "=>1.0.0", in: []string{"1.0.0"}, out: []string{"0.9.9"}},
		{constraint: "<2", in: []string{"1.9.9"}, out: []string{"2.0.0"}},
		{constraint: "<=2", in: []string{"2.5.0"}, out: []string{"3.0.0"}},
		{constraint: "=<2", in: []string{"2.5.0"}, out: []string{"3.0.0"}},
		{constraint: ">= 1.0, < 2", in: []string{"1.5.0"}, out: []string{"2.0.0"}},
		{constraint: ">=1.0 <2", in: []string{"1.5.0"}, out: []string{"2.0.0"}},
		{constraint: "^2, <3", in: []string{"2.1.0"}, out: []string{"3.0.0"}},
		{constraint: "1.x || 2.x", in: []string{"1.1.0", "2.1.0"}, out: []string{"3.0.0"}},
		{constraint: "1.2 - 1.4", in: []string{"1.2.0", "1.4.5"}, out: []string{"1.5.0", "1.1.9"}},
		{constraint: "1.2-1.4", in: []string{"1.2.0-1.4"}, out: []string{"1.3.0"}},
		{constraint: "v1", in: []string{"1.2.0"}, out: []string{"2.0.0"}},
		{constraint: ">=1.0.0-0", in: []string{"1.0.0-beta"}, out: []string{"0.9.0"}},
		{constraint: "1.2.3-beta.1+b.7", in: []string{"1.2.3-beta.1"}, out: []string{"1.2.3"}},
		{constraint: ""},
		{constraint: "   "},
		{constraint: "==2"},
		{constraint: ">>2"},
		{constraint: "2.0.0.1"},
		{constraint: "~2.x.y"},
		{constraint: "^2 && <3"},
		{constraint: "latest"},
		{constraint: "1.x ||"},
		{constraint: strings.Repeat("1 || ", 32) + "1"},
	}
	for _, tt := range tests {
		t.Run(tt.constraint, func(t *testing.T) {
			c, msg := parseConstraint(tt.constraint)
			valid := tt.in != nil
			if (msg == "") != valid {
				t.Fatalf("parseConstraint(%q) = %q, want valid %v", tt.constraint, msg, valid)
			}
			for _, v := range tt.in {
				if !c.Check(semver.MustParse(v)) {
					t.Errorf("%q does not admit %s", tt.constraint, v)
				}
			}
			for _, v := range tt.out {
				if c.Check(semver.MustParse(v)) {
					t.Errorf("%q admits %s", tt.constraint, v)
				}
			}
		})
	}
}

// quotedConstraint matches a message quoting a constraint as invalid, with
// the quotes escaped or not (docs/cli.md quotes JSON).
var quotedConstraint = regexp.MustCompile(`\\?"([^"\\]*)\\?" is not a valid semver constraint`)

// TestDocsQuoteInvalidConstraints checks every constraint that README.md and
// docs/ quote as invalid: Parse must refuse it with that very message.
func TestDocsQuoteInvalidConstraints(t *testing.T) {
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, path := range append(docs, "../README.md") {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range quotedConstraint.FindAllStringSubmatch(string(data), -1) {
			found++
			want := `"` + m[1] + `" is not a valid semver constraint`
			if _, msg := parseConstraint(m[1]); msg != want {
				t.Errorf("%s quotes %s; parseConstraint says %q", path, m[0], msg)
			}
		}
	}
	if found == 0 {
		t.Error("no quoted invalid constraint found in README.md or docs/: is the pattern stale?")
	}
}
