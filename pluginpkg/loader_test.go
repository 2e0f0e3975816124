package pluginpkg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/pkgfiles"
)

func TestLoaderReusesUnchangedManifests(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "packages", "demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, ManifestFile)
	write := func(version string, age time.Duration) {
		t.Helper()
		data := `{"format": 1, "name": "demo", "version": "` + version + `"}`
		if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-age)
		if err := os.Chtimes(file, old, old); err != nil {
			t.Fatal(err)
		}
	}
	load := func(l *Loader) *Package {
		t.Helper()
		inst, err := l.Load(home)
		if err != nil || len(inst.Packages) != 1 {
			t.Fatalf("Load: %v, %+v", err, inst)
		}
		return inst.Packages[0]
	}
	var l Loader
	write("1.0.0", time.Hour)
	// Chtimes set the change time to now: a version changed within
	// RacyWindow is read again at each load until the window has passed.
	time.Sleep(RacyWindow)
	first := load(&l)
	if second := load(&l); second.Manifest != first.Manifest {
		t.Error("an unchanged manifest was parsed again")
	}
	var other Loader // every Loader of the process shares the cache
	if third := load(&other); third.Manifest != first.Manifest {
		t.Error("another Loader parsed an unchanged manifest again")
	}
	// A same-size rewrite is noticed even within the same timestamp tick:
	// a recently modified file is never trusted from the cache.
	write("1.0.1", 0)
	if got := load(&l).Manifest.Version.String(); got != "1.0.1" {
		t.Errorf("after a same-size rewrite: version %s, want 1.0.1", got)
	}
	write("1.0.2", 0)
	if got := load(&l).Manifest.Version.String(); got != "1.0.2" {
		t.Errorf("after a second rewrite: version %s, want 1.0.2", got)
	}
	// An invalid manifest still warns, every time.
	if err := os.WriteFile(file, []byte(`{"format": 1, "name": "demo"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		inst, err := l.Load(home)
		if err != nil || len(inst.Packages) != 0 || len(inst.Warnings) != 1 || !strings.Contains(inst.Warnings[0].Message, "version") {
			t.Fatalf("invalid manifest: %v %+v", err, inst)
		}
	}
}

// TestLoaderCacheBounded: the process-wide manifest cache is emptied,
// not grown, when the next manifest would take it past its bytes.
func TestLoaderCacheBounded(t *testing.T) {
	var l Loader
	now := time.Now()
	l.store("/bound/a/plugin.json", pkgfiles.Stat{Size: maxCachedManifestBytes - 5}, now, &Manifest{Name: "a"}, "", "", "")
	l.store("/bound/b/plugin.json", pkgfiles.Stat{Size: 10}, now, &Manifest{Name: "b"}, "", "", "")
	manifests.mu.Lock()
	_, hasA := manifests.byPath["/bound/a/plugin.json"]
	_, hasB := manifests.byPath["/bound/b/plugin.json"]
	n, bytes := len(manifests.byPath), manifests.bytes
	manifests.mu.Unlock()
	if hasA || !hasB || n != 1 || bytes != 10 {
		t.Errorf("after passing the bound: a cached %v, b cached %v, %d entries, %d bytes; want only b, 10 bytes", hasA, hasB, n, bytes)
	}
}

// A Loader lists an unchanged packages directory from its cache, and sees
// every package added, removed, or replaced by a symbolic link, whether
// the directory changed long ago or a moment ago.
func TestLoaderListsChangedPackagesDirectories(t *testing.T) {
	home := t.TempDir()
	pkgs := filepath.Join(home, "packages")
	add := func(name string) {
		t.Helper()
		dir := filepath.Join(home, "store", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		data := `{"format": 1, "name": "` + name + `", "version": "1.0.0"}`
		if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(pkgs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(dir, filepath.Join(pkgs, name)); err != nil {
			t.Fatal(err)
		}
	}
	var l Loader
	names := func() string {
		t.Helper()
		inst, err := l.Load(home)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range inst.Packages {
			out = append(out, p.Name+"@"+filepath.Base(filepath.Dir(p.Dir)))
		}
		return strings.Join(out, ",")
	}
	if got := names(); got != "" {
		t.Fatalf("a home without packages/ lists %q", got)
	}
	add("a")
	add("b")
	for _, settle := range []bool{false, true} {
		if settle {
			time.Sleep(2 * RacyWindow) // from here on, the listing is cached
		}
		if got := names(); got != "a@packages,b@packages" {
			t.Fatalf("settled %v: packages %q, want a and b", settle, got)
		}
		if got := names(); got != "a@packages,b@packages" {
			t.Fatalf("settled %v, loaded again: packages %q, want a and b", settle, got)
		}
	}
	add("c")
	if got := names(); got != "a@packages,b@packages,c@packages" {
		t.Errorf("after adding c: packages %q", got)
	}
	time.Sleep(2 * RacyWindow)
	names() // cached again
	if err := os.RemoveAll(filepath.Join(pkgs, "b")); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "a@packages,c@packages" {
		t.Errorf("after removing b: packages %q", got)
	}
	time.Sleep(2 * RacyWindow)
	names()
	// c becomes a symbolic link to a directory elsewhere: its package is
	// then loaded from where the link leads.
	elsewhere := filepath.Join(home, "elsewhere", "c")
	if err := os.MkdirAll(filepath.Dir(elsewhere), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(pkgs, "c"), elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(pkgs, "c")); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "a@packages,c@elsewhere" {
		t.Errorf("after making c a link: packages %q", got)
	}
	// packages/ swapped for another directory, which settles before the
	// next load: another directory (inode), so listed again.
	time.Sleep(2 * RacyWindow)
	names()
	next := filepath.Join(home, "next")
	if err := os.MkdirAll(filepath.Join(next, "z"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(next, "z", ManifestFile), []byte(`{"format": 1, "name": "z", "version": "1.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(pkgs, filepath.Join(home, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, pkgs); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * RacyWindow)
	if got := names(); got != "z@packages" {
		t.Errorf("after swapping packages/ for another directory: packages %q", got)
	}
}

// TestLoaderCacheHitChecksName: a cached manifest is handed only to the
// package it was read for. A second name linking to the same directory
// is refused at every load (its manifest names the other), also once the
// manifest is in the cache; the cached package keeps its own paths.
func TestLoaderCacheHitChecksName(t *testing.T) {
	home := t.TempDir()
	pkgs := filepath.Join(home, "packages")
	if err := os.MkdirAll(filepath.Join(pkgs, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(pkgs, "real", ManifestFile)
	if err := os.WriteFile(file, []byte(`{"format": 1, "name": "real", "version": "1.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(pkgs, "alias")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * RacyWindow)
	var l Loader
	for i := range 3 {
		inst, err := l.Load(home)
		if err != nil {
			t.Fatal(err)
		}
		if len(inst.Packages) != 1 || inst.Packages[0].Name != "real" || inst.Packages[0].Manifest.Name != "real" {
			t.Fatalf("load %d: packages %+v, want only real", i, inst.Packages)
		}
		if p := inst.Packages[0]; p.ManifestPath != "packages/real/plugin.json" || filepath.Base(p.Dir) != "real" {
			t.Errorf("load %d: paths %q %q", i, p.ManifestPath, p.Dir)
		}
		if len(inst.Warnings) != 1 || inst.Warnings[0].Package != "alias" || !strings.Contains(inst.Warnings[0].Message, "does not match") {
			t.Errorf("load %d: warnings %+v, want alias's name mismatch", i, inst.Warnings)
		}
	}
}
