package pluginpkg

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeFile writes content to home-relative path rel, creating directories.
func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// manifestJSON returns a minimal valid manifest for name.
func manifestJSON(name string) string {
	return `{"format": 1, "name": "` + name + `", "version": "1.0.0"}`
}

// summary renders an Installed as one line per package and warning.
func summary(inst *Installed) []string {
	var out []string
	for _, p := range inst.Packages {
		s := p.Name + " enabled=" + map[bool]string{true: "yes", false: "no"}[p.Enabled]
		if p.Pin != "" {
			s += " pin=" + p.Pin[:8]
		}
		out = append(out, s)
	}
	for _, w := range inst.Warnings {
		out = append(out, "warning["+w.Package+"] "+w.String())
	}
	return out
}

func TestLoadInstalled(t *testing.T) {
	pin := strings.Repeat("ab", 32)
	tests := []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, home string)
		want  []string
	}{{
		name: "empty home",
		want: nil,
	}, {
		name:  "empty packages dir",
		setup: func(t *testing.T, home string) { os.Mkdir(filepath.Join(home, "packages"), 0o755) },
		want:  nil,
	}, {
		name: "name order and default enabled",
		files: map[string]string{
			"packages/zeta/plugin.json":  manifestJSON("zeta"),
			"packages/alpha/plugin.json": manifestJSON("alpha"),
			"packages/mid/plugin.json":   manifestJSON("mid"),
		},
		want: []string{"alpha enabled=yes", "mid enabled=yes", "zeta enabled=yes"},
	}, {
		name: "state applied",
		files: map[string]string{
			"packages/a/plugin.json": manifestJSON("a"),
			"packages/b/plugin.json": manifestJSON("b"),
			"packages/c/plugin.json": manifestJSON("c"),
			"state.json":             `{"format":1,"packages":{"a":{"enabled":false},"b":{"enabled":true,"pin":"` + pin + `"},"c":{}}}`,
		},
		want: []string{"a enabled=no", "b enabled=yes pin=abababab", "c enabled=yes"},
	}, {
		name: "broken manifest reports every problem",
		files: map[string]string{
			"packages/bad/plugin.json": `{"format": 1, "name": "bad", "version": "1", "runtime": {"command": "/bin/sh", "priority": "x"}}`,
			"packages/ok/plugin.json":  manifestJSON("ok"),
		},
		want: []string{
			"ok enabled=yes",
			`warning[bad] packages/bad/plugin.json: version: "1" is not a valid semantic version: use MAJOR.MINOR.PATCH such as "1.0.0"`,
			`warning[bad] packages/bad/plugin.json: runtime.command: "/bin/sh" is an absolute path; use a path relative to the package directory (such as "./bin/plugin") or a bare command name looked up on PATH`,
			`warning[bad] packages/bad/plugin.json: runtime.priority: must be an integer, got string`,
		},
	}, {
		name: "invalid JSON",
		files: map[string]string{
			"packages/bad/plugin.json": "{\n  \"format\": 1,,\n}",
		},
		want: []string{`warning[bad] packages/bad/plugin.json: invalid JSON at line 2, column 15: invalid character ',' looking for beginning of object key string`},
	}, {
		name: "directory name differs from manifest name",
		files: map[string]string{
			"packages/dir-name/plugin.json": manifestJSON("manifest-name"),
		},
		want: []string{`warning[dir-name] packages/dir-name/plugin.json: manifest name "manifest-name" does not match directory name "dir-name"; the package is not loaded`},
	}, {
		name: "missing manifest",
		setup: func(t *testing.T, home string) {
			os.MkdirAll(filepath.Join(home, "packages", "empty"), 0o755)
		},
		want: []string{`warning[empty] packages/empty/plugin.json: missing manifest (every package directory needs a plugin.json)`},
	}, {
		name: "non-directory entry",
		files: map[string]string{
			"packages/README.md":     "notes",
			"packages/a/plugin.json": manifestJSON("a"),
		},
		want: []string{"a enabled=yes", `warning[README.md] packages/README.md: not a package directory; only directories under packages/ are loaded`},
	}, {
		name:  "state entry for a package that is not installed",
		files: map[string]string{"state.json": `{"format":1,"packages":{"ghost":{"enabled":false},"a":{"enabled":true}}}`, "packages/a/plugin.json": manifestJSON("a")},
		want: []string{
			"a enabled=yes",
			`warning[ghost] state.json: entry for package "ghost", which is not installed; the entry is ignored`,
		},
	}, {
		name: "symlinked package directory is followed",
		files: map[string]string{
			"elsewhere/linked/plugin.json": manifestJSON("linked"),
		},
		setup: func(t *testing.T, home string) {
			os.MkdirAll(filepath.Join(home, "packages"), 0o755)
			if err := os.Symlink("../elsewhere/linked", filepath.Join(home, "packages", "linked")); err != nil {
				t.Fatal(err)
			}
		},
		want: []string{"linked enabled=yes"},
	}, {
		name: "broken symlink",
		setup: func(t *testing.T, home string) {
			os.MkdirAll(filepath.Join(home, "packages"), 0o755)
			os.Symlink("../nowhere", filepath.Join(home, "packages", "dangling"))
		},
		want: []string{`warning[dangling] packages/dangling: broken symbolic link (target "../nowhere" does not exist)`},
	}, {
		name: "hidden entries are ignored",
		files: map[string]string{
			"packages/.install-x-123/plugin.json": manifestJSON("x"),
			"packages/.DS_Store":                  "",
		},
		want: nil,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			for rel, content := range tc.files {
				writeFile(t, home, rel, content)
			}
			if tc.setup != nil {
				tc.setup(t, home)
			}
			inst, err := LoadInstalled(home)
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(inst); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestLoadInstalledPackageFields(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, "packages/a/plugin.json", manifestJSON("a"))
	inst, err := LoadInstalled(home)
	if err != nil {
		t.Fatal(err)
	}
	p := inst.Packages[0]
	dir, _ := filepath.EvalSymlinks(filepath.Join(home, "packages", "a"))
	if p.Dir != dir || p.ManifestPath != "packages/a/plugin.json" || inst.Home != home {
		t.Errorf("Dir %q ManifestPath %q Home %q", p.Dir, p.ManifestPath, inst.Home)
	}
	if want := sha256Hex([]byte(manifestJSON("a"))); p.ManifestSHA256 != want {
		t.Errorf("ManifestSHA256 = %s, want %s", p.ManifestSHA256, want)
	}
	var ve *ValidationError
	writeFile(t, home, "packages/b/plugin.json", `{}`)
	inst, _ = LoadInstalled(home)
	if len(inst.Warnings) != 3 || !errors.As(inst.Warnings[0].Err, &ve) || len(ve.Problems) != 3 {
		t.Errorf("warnings for {} = %v (Err %v)", inst.Warnings, inst.Warnings[0].Err)
	}
}

func TestLoadInstalledErrors(t *testing.T) {
	tests := []struct {
		name  string
		state string
		want  string
	}{
		{"syntax error", "{\"format\": 1,\n \"packages\": {\"a\": {\"enabled\": flase}}}", `state.json: corrupt state file at line 2, column 33: invalid character 'l' in literal false (expecting 'a')`},
		{"truncated", `{"format": 1, "packages": {`, `state.json: corrupt state file at line 1, column 28: unexpected end of JSON input`},
		{"wrong type", `{"format": 1, "packages": {"a": {"enabled": "no"}}}`, `state.json: corrupt state file at line 1, column 48: json: cannot unmarshal string into Go struct field .packages.enabled of type bool`},
		{"unknown field", `{"format": 1, "packages": {}, "extra": 1}`, `state.json: corrupt state file: json: unknown field "extra"`},
		{"bad pin", `{"format": 1, "packages": {"a": {"pin": "ABC"}}}`, `state.json: corrupt state file: packages["a"].pin: "ABC" is neither 64 lower-case hex digits nor "package:<64 hex>:<64 hex>"`},
		{"newer format", `{"format": 2, "packages": {}}`, `state.json: corrupt state file: format 2 needs a newer extkernel (this build reads 1)`},
		{"missing format", `{"packages": {}}`, `state.json: corrupt state file: missing "format"`},
		{"trailing data", `{"format": 1} x`, `state.json: corrupt state file at line 1, column 15: invalid data after the top-level value`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			writeFile(t, home, "state.json", tc.state)
			_, err := LoadInstalled(home)
			if !errors.Is(err, ErrCorruptState) {
				t.Fatalf("err = %v, want ErrCorruptState", err)
			}
			if got, want := err.Error(), filepath.Join(home, tc.want); got != want {
				t.Errorf("error:\n%s\nwant:\n%s", got, want)
			}
			// Writers refuse to replace a corrupt state file.
			writeFile(t, home, "packages/a/plugin.json", manifestJSON("a"))
			if err := Disable(home, "a"); !errors.Is(err, ErrCorruptState) {
				t.Errorf("Disable on corrupt state: %v", err)
			}
			if data, _ := os.ReadFile(filepath.Join(home, "state.json")); string(data) != tc.state {
				t.Errorf("state file changed to %q", data)
			}
		})
	}
	t.Run("missing home", func(t *testing.T) {
		_, err := LoadInstalled(filepath.Join(t.TempDir(), "nope"))
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("err = %v, want fs.ErrNotExist", err)
		}
	})
}

// joinElem is filepath.Join for a clean directory; it must never give
// another path.
func TestJoinElem(t *testing.T) {
	for _, dir := range []string{"/", "/home/u/.extkernel/packages", "packages", "a"} {
		for _, elem := range []string{"echo", "p-00", ".hidden", "..", ".", "", "a/b", "a/../b", "plugin.json"} {
			if got, want := joinElem(dir, elem), filepath.Join(dir, elem); got != want {
				t.Errorf("joinElem(%q, %q) = %q, want %q", dir, elem, got, want)
			}
			if elem == "" || elem == "." || elem == ".." {
				continue // no entry of a directory is named so
			}
			pkgDir, file := manifestUnder(dir, elem)
			if want := filepath.Join(dir, elem); pkgDir != want || file != filepath.Join(want, ManifestFile) {
				t.Errorf("manifestUnder(%q, %q) = %q, %q, want %q and its %s", dir, elem, pkgDir, file, want, ManifestFile)
			}
			if strings.Contains(elem, "/") {
				continue // nor holds a slash
			}
			rel, mpath := manifestPaths(elem)
			if want := path.Join(PackagesDir, elem); rel != want || mpath != path.Join(want, ManifestFile) {
				t.Errorf("manifestPaths(%q) = %q, %q, want %q and its %s", elem, rel, mpath, want, ManifestFile)
			}
		}
	}
}
