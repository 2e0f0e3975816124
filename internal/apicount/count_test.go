package main

import (
	"reflect"
	"strings"
	"testing"
)

// TestCountTree counts the fixture module testdata/mod, whose comments say
// what each declaration adds, for two systems: the build-tagged files of
// the other system are left out, and so are test files, main packages,
// testdata and the nested module.
func TestCountTree(t *testing.T) {
	tests := []struct {
		goos string
		want []count
	}{
		{"linux", []count{
			{dir: "api", top: 10, methods: 3, iface: 2, fields: 4},
			{dir: "internal/helper", top: 1, methods: 1, fields: 1},
		}},
		{"windows", []count{
			{dir: "api", top: 11, methods: 3, iface: 2, fields: 4},
			{dir: "internal/helper", top: 1, methods: 1, fields: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.goos, func(t *testing.T) {
			got, err := countTree("testdata/mod", tt.goos)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if len(got[i].names) != got[i].total() {
					t.Errorf("%s: %d names %v, want total %d", got[i].dir, len(got[i].names), got[i].names, got[i].total())
				}
				got[i].names = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("countTree = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestWrite prints public packages, then internal ones, each group with
// its sum; total leaves interface methods out.
func TestWrite(t *testing.T) {
	var b strings.Builder
	write(&b, []count{
		{dir: "a", top: 1, methods: 2, iface: 5, fields: 3},
		{dir: "b", top: 10},
		{dir: "internal/x", top: 4, fields: 1},
	})
	want := []string{
		"package top methods iface fields total",
		"a 1 2 5 3 6",
		"b 10 0 0 0 10",
		"(public) 11 2 5 3 16",
		"internal/x 4 0 0 1 5",
		"(internal) 4 0 0 1 5",
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		got = append(got, strings.Join(strings.Fields(line), " "))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("write printed\n%s\nwant (spacing aside)\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestWriteNames lists what total counts in the fixture, per package and
// sorted: top-level names, Type.Method and Type.Field.
func TestWriteNames(t *testing.T) {
	counts, err := countTree("testdata/mod", "linux")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeNames(&b, counts)
	want := `api	A
api	Alias
api	B
api	Defined
api	F
api	G
api	G.Get
api	I
api	OnLinux
api	S
api	S.M
api	S.Nested
api	S.P
api	S.Reader
api	S.X
api	S.Y
api	V
internal/helper	H
internal/helper	H.A
internal/helper	H.Do
`
	if got := b.String(); got != want {
		t.Errorf("writeNames =\n%s\nwant\n%s", got, want)
	}
}

// caps are the most exported names a public package may have (issue 22):
// a room over its cap is slimmed, never moved into internal/. protocol's
// was raised from 69 to 71 for protocol 1.4's features member, which
// both handshake types carry (issue 28, item 2): a member of the wire is
// a field of its Go type, and no other name of the vocabulary is unused.
// generation's was raised from 145 to 146 for Member.Fingerprint (issue
// 25): a builder outside the package takes a member's fingerprint before
// its spawn and while the rest of the build runs, which Assemble alone
// (at the end of a build) cannot; and to 147 for Fingerprint.WithFiles
// (issue 25): a lazy member's fingerprint leaves its files out, and
// whoever starts its process (outside the package) fingerprints them
// just before the spawn, the same way a member's own fingerprint does.
var caps = map[string]int{"sidecar": 81, "kernel": 70, "protocol": 71, "generation": 147}

// TestCaps holds the module's public packages to their caps, counted on
// Linux (where the most files build).
func TestCaps(t *testing.T) {
	counts, err := countTree("../..", "linux")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range counts {
		limit, ok := caps[c.dir]
		if !ok {
			continue
		}
		seen[c.dir] = true
		if c.total() > limit {
			t.Errorf("package %s has %d exported names, over its cap of %d: slim it (go run ./internal/apicount -names %s)",
				c.dir, c.total(), limit, c.dir)
		}
	}
	for dir := range caps {
		if !seen[dir] {
			t.Errorf("package %s was not counted", dir)
		}
	}
}
