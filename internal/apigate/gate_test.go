package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fixture copies testdata/mod to a temporary directory, records its API
// there as the last release's (-freeze) and returns the options that gate
// it.
func fixture(t *testing.T) options {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "lib/lib.go"} {
		data, err := os.ReadFile(filepath.Join("testdata", "mod", name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name), string(data))
	}
	o := options{dir: dir, pkgs: []string{"lib"}}
	fo := o
	fo.freeze = true
	if ok, err := run(fo, new(strings.Builder)); !ok || err != nil {
		t.Fatalf("freeze: ok %v, err %v", ok, err)
	}
	return o
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// edit replaces old by new in the fixture's lib.go.
func edit(t *testing.T, o options, old, new string) {
	t.Helper()
	name := filepath.Join(o.dir, "lib", "lib.go")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("lib.go has no %q", old)
	}
	writeFile(t, name, strings.Replace(string(data), old, new, 1))
}

// gate runs the gate on the fixture and returns whether it passed and
// what it printed.
func gate(t *testing.T, o options) (bool, string) {
	t.Helper()
	var out strings.Builder
	ok, err := run(o, &out)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return ok, out.String()
}

// changelog writes the fixture's CHANGELOG.md with the given body under
// "## Unreleased", followed by an older release.
func changelog(t *testing.T, o options, body string) {
	t.Helper()
	writeFile(t, filepath.Join(o.dir, "CHANGELOG.md"),
		"# Changelog\n\n## Unreleased\n\n"+body+"\n## v0.1.0\n\n### Breaking\n\n- `lib.Change`, `lib.Remove`, `lib.Options`\n")
}

// TestGate makes deliberate incompatible changes to the fixture module
// (a removed function, a changed signature, a removed field, a method
// added to an interface) and an addition: each fails the gate until the
// CHANGELOG's "## Unreleased" names the name under "### Breaking" (and,
// for a line the code gained, -write records it). Names in an older
// release's section, or under another heading, allow nothing.
func TestGate(t *testing.T) {
	tests := []struct {
		name, old, new string
		breaking       string // the span the CHANGELOG needs; "" for none
		want           string // a line the failing gate prints
		write          bool   // whether -write is needed too
	}{
		{"removed function", "func Remove() {}", "", "`lib.Remove`", "pkg lib, func Remove()", false},
		{"changed signature", "func Change(ctx context.Context, n int)", "func Change(ctx context.Context, n int64)",
			"`lib.Change()`", "pkg lib, func Change(context.Context, int) (string, error)", true},
		{"removed field", "\tName    string\n", "", "`lib.Options.Name`", "pkg lib, type Options struct, Name string", false},
		{"type named whole", "\tName    string\n", "", "`lib.Options`", "pkg lib, type Options struct, Name string", false},
		{"method added to an interface", "\tClose() error\n", "\tClose() error\n\tFlush() error\n",
			"`lib.Source`", "pkg lib, type Source interface { Close, Read }", true},
		{"addition", "// Kind is", "// Added is new.\nfunc Added() {}\n\n// Kind is", "", "pkg lib, func Added()", true},
		{"parameter renamed", "f func(elem T) U", "f func(x T) U", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := fixture(t)
			changelog(t, o, "### Added\n\n- "+tt.breaking+"\n")
			edit(t, o, tt.old, tt.new)
			ok, out := gate(t, o)
			if tt.want == "" {
				if !ok {
					t.Fatalf("gate failed on a compatible change:\n%s", out)
				}
				return
			}
			if ok || !strings.Contains(out, "\t"+tt.want+"\n") {
				t.Fatalf("gate passed or did not name %q:\n%s", tt.want, out)
			}
			if tt.write {
				wo := o
				wo.write = true
				if ok, out = gate(t, wo); ok != (tt.breaking == "") {
					t.Fatalf("after -write: ok %v:\n%s", ok, out)
				}
			}
			if tt.breaking == "" {
				return
			}
			changelog(t, o, "### Breaking: the fixture's\n\n- "+tt.breaking+" is gone.\n")
			if ok, out := gate(t, o); !ok || !strings.Contains(out, "allowed by CHANGELOG.md: "+tt.want) {
				t.Fatalf("gate with %s under ### Breaking: ok %v:\n%s", tt.breaking, ok, out)
			}
		})
	}
}

// TestGateNewMajor holds that a new module path (a major version's /vN)
// allows every removal.
func TestGateNewMajor(t *testing.T) {
	o := fixture(t)
	edit(t, o, "func Remove() {}", "")
	writeFile(t, filepath.Join(o.dir, "go.mod"), "module example.com/fixture/v2\n\ngo 1.26\n")
	if ok, out := gate(t, o); !ok {
		t.Fatalf("gate failed for a new major version:\n%s", out)
	}
}

// TestGateStaleAddition holds that api/v0.next.txt may not list a line
// the code lacks: -write removes it without any CHANGELOG entry (it was
// never released).
func TestGateStaleAddition(t *testing.T) {
	o := fixture(t)
	writeFile(t, filepath.Join(o.dir, "api", nextFile), "pkg lib, func Gone()\n")
	if ok, out := gate(t, o); ok || !strings.Contains(out, "\tpkg lib, func Gone()\n") {
		t.Fatalf("gate passed or did not name the stale line:\n%s", out)
	}
	o.write = true
	if ok, out := gate(t, o); !ok {
		t.Fatalf("after -write:\n%s", out)
	}
}

// TestKeyOf holds that the key read back from every line of the fixture's
// API is the one the walker gave it: the CHANGELOG rule sees the names
// the walker emitted.
func TestKeyOf(t *testing.T) {
	fs, _, err := extract(filepath.Join("testdata", "mod"), []string{"lib"})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range fs {
		if got := keyOf(f.line); got != f.key {
			t.Errorf("keyOf(%q) = %q, want %q", f.line, got, f.key)
		}
		keys = append(keys, f.key)
	}
	want := []string{
		"lib.Version", "lib.Change", "lib.Map", "lib.Remove", "lib.Box.Get", "lib.Alias",
		"lib.Box", "lib.Box.Value", "lib.Box.Reader", "lib.Kind",
		"lib.Options", "lib.Options.Name", "lib.Options.OnEvent",
		"lib.Source", "lib.Source.Close", "lib.Source.Read", "lib.Default",
	}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("keys = %q\nwant %q", keys, want)
	}
}

// TestBreakingNames holds which spans of a CHANGELOG allow a break: those
// under "### Breaking..." headings of "## Unreleased" only.
func TestBreakingNames(t *testing.T) {
	log := "# Changelog\n\n## Unreleased\n\n### Added\n\n- `a.Added`\n\n" +
		"### Breaking changes\n\n- `kernel.New()` and `kernel/config.Config.Home`\n  (`generation.Plan`).\n\n" +
		"### Fixed\n\n- `a.Fixed`\n\n## v0.1.0\n\n### Breaking\n\n- `a.Old`\n"
	got := breakingNames([]byte(log))
	want := map[string]bool{"kernel.New": true, "kernel/config.Config.Home": true, "generation.Plan": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("breakingNames = %v, want %v", got, want)
	}
	for key, ok := range map[string]bool{
		"kernel.New": true, "kernel.NewX": false, "kernel/config.Config.Home": true,
		"config.Config.Home": false, "generation.Plan.Names": true, "generation.Planner": false,
	} {
		if allowed(got, key) != ok {
			t.Errorf("allowed(%q) = %v, want %v", key, !ok, ok)
		}
	}
	if !allowed(map[string]bool{"config.Config.Home": true}, "kernel/config.Config.Home") {
		t.Error("a package named by its last element does not allow")
	}
}
