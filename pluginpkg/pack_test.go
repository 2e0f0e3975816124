package pluginpkg

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// platformManifest is a manifest running ./bin/<platform> per platform.
const platformManifest = `{"format": 1, "name": "multi", "version": "1.0.0", "runtime": {
  "platforms": {"linux/amd64": "./bin/linux-amd64", "darwin/arm64": "./bin/darwin-arm64"}}}`

func multiEntries() []testEntry {
	return []testEntry{
		{name: "plugin.json", body: platformManifest},
		{name: "bin/linux-amd64", body: "#!/bin/sh\n", mode: 0o755},
		{name: "bin/darwin-arm64", body: "#!/bin/sh\n", mode: 0o700},
		{name: "README", body: "hello", mode: 0o600},
		{name: "docs/link", typ: tar.TypeSymlink, link: "../README"},
		{name: "__pycache__/x.pyc", body: "cache"},
		{name: "empty", typ: tar.TypeDir},
	}
}

// TestPackReproducible packs the same package from two directories made
// at different times with other modes and mtimes: the bytes are equal,
// and the archive installs with the files digest of its directory.
func TestPackReproducible(t *testing.T) {
	a := writeDir(t, multiEntries())
	b := writeDir(t, multiEntries())
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	filepath.Walk(b, func(p string, _ os.FileInfo, _ error) error { os.Chtimes(p, old, old); return nil })
	os.Chmod(filepath.Join(b, "README"), 0o644)
	var ab, bb bytes.Buffer
	pa, err := Pack(a, &ab)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Pack(b, &bb); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ab.Bytes(), bb.Bytes()) {
		t.Fatal("two packs of the same package differ")
	}
	if pa.Manifest.Name != "multi" || string(pa.ManifestBytes) != platformManifest || pa.Entries != 8 {
		t.Fatalf("packed %+v", pa)
	}
	tr := tar.NewReader(mustGunzip(t, ab.Bytes()))
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if !h.ModTime.Equal(packTime) || h.Uid != 0 || h.Uname != "" {
			t.Errorf("%s: header %+v not normalised", h.Name, h)
		}
		names = append(names, h.Name)
	}
	want := "README bin/ bin/darwin-arm64 bin/linux-amd64 docs/ docs/link empty/ plugin.json"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("entries %s, want %s", got, want)
	}
	withPlatform(t, "linux/amd64")
	src := filepath.Join(t.TempDir(), "multi.tar.gz")
	os.WriteFile(src, ab.Bytes(), 0o644)
	home := t.TempDir()
	res, err := InstallSource(home, src, InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := digestOf(t, a); res.Digest != want {
		t.Errorf("installed digest %s, want the directory's %s", res.Digest, want)
	}
}

// TestPackRefuses: a command missing or not executable, a hostile
// directory, a directory that is not a package.
func TestPackRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []testEntry
		want    string
	}{
		{"missing platform command", []testEntry{{name: "plugin.json", body: platformManifest},
			{name: "bin/linux-amd64", body: "x", mode: 0o755}},
			`runtime.platforms["darwin/arm64"]: "./bin/darwin-arm64" is not in the package`},
		{"not executable", []testEntry{{name: "plugin.json", body: platformManifest},
			{name: "bin/linux-amd64", body: "x", mode: 0o755}, {name: "bin/darwin-arm64", body: "x"}},
			`"./bin/darwin-arm64" is not executable`},
		{"link out", []testEntry{{name: "plugin.json", body: manifestJSON("x")},
			{name: "out", typ: tar.TypeSymlink, link: "../../etc/passwd"}}, "(rule link)"},
		{"no manifest", []testEntry{{name: "README", body: "x"}}, "(rule manifest)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Pack(writeDir(t, tc.entries), new(bytes.Buffer))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// withPlatform makes Parse select the command of platform for the test.
func withPlatform(t *testing.T, platform string) {
	old := hostPlatform
	hostPlatform = platform
	t.Cleanup(func() { hostPlatform = old })
}

// TestPlatforms: Parse selects the host's command, falls back to
// runtime.command, and leaves Command empty when neither fits; such a
// package is not loaded and not installed, with the same sentence.
func TestPlatforms(t *testing.T) {
	withPlatform(t, "linux/arm64")
	m, err := Parse("p", []byte(`{"format": 1, "name": "a", "version": "1.0.0", "runtime": {"command": "python3",
	  "platforms": {"linux/arm64": "./bin/arm"}}}`))
	if err != nil || m.Runtime.Command != "./bin/arm" || m.Runtime.DefaultCommand != "python3" || m.Runtime.CommandFor("windows/amd64") != "python3" {
		t.Fatalf("m = %+v, %v", m, err)
	}
	m, err = Parse("p", []byte(platformManifest))
	if err != nil || m.Runtime.Command != "" {
		t.Fatalf("m = %+v, %v", m, err)
	}
	want := "no command for this host's platform linux/arm64: runtime.platforms has darwin/arm64, linux/amd64 and there is no runtime.command to fall back to"
	if got := m.Runtime.NoPlatform(); got != want {
		t.Errorf("NoPlatform = %q, want %q", got, want)
	}
	if err := m.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	out, _ := m.MarshalJSON()
	if m2, err := Parse("p", out); err != nil || m2.Runtime.Platforms["linux/amd64"] != "./bin/linux-amd64" {
		t.Errorf("round trip %s: %v", out, err)
	}
	dir := writeDir(t, multiEntries())
	home := t.TempDir()
	_, err = InstallSource(home, dir, InstallOptions{})
	if !errors.Is(err, ErrRefusedSource) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "(rule platform)") {
		t.Fatalf("install: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, PackagesDir, "multi")); err == nil {
		t.Error("refused install wrote the package")
	}
	writeFile(t, home, "packages/multi/plugin.json", platformManifest)
	inst, err := LoadInstalled(home)
	if err != nil || len(inst.Packages) != 0 || len(inst.Warnings) != 1 || !strings.Contains(inst.Warnings[0].Message, want) {
		t.Fatalf("load: %v %+v", err, inst)
	}
}

// TestPlatformsInvalid: every problem of runtime.platforms with its path.
func TestPlatformsInvalid(t *testing.T) {
	for _, tc := range []struct{ runtime, want string }{
		{`{}`, "runtime.command: required field is missing"},
		{`{"platforms": {}}`, "runtime.platforms: must name at least one platform"},
		{`{"platforms": {"linx/amd64": "./x"}}`, `runtime.platforms["linx/amd64"]: platform "linx/amd64": unknown os "linx" (did you mean "linux"?)`},
		{`{"platforms": {"linux/amd64/v3": "./x"}}`, `must be os/arch`},
		{`{"platforms": {"linux/x86": "./x"}}`, `unknown arch "x86"`},
		{`{"platforms": {"linux/amd64": "../x"}}`, `runtime.platforms["linux/amd64"]: "../x" escapes the package directory`},
		{`{"platforms": {"linux/amd64": 3}}`, `runtime.platforms["linux/amd64"]: must be a string`},
		{`{"platforms": ["./x"]}`, `runtime.platforms: must be an object of strings`},
	} {
		t.Run(tc.runtime, func(t *testing.T) {
			_, err := Parse("p.json", []byte(`{"format": 1, "name": "a", "version": "1.0.0", "runtime": `+tc.runtime+`}`))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func mustGunzip(t *testing.T, b []byte) *gzip.Reader {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}
