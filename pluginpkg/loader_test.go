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
	l.store("/bound/a/plugin.json", pkgfiles.Stat{Size: maxCachedManifestBytes - 5}, now, &Manifest{Name: "a"}, "")
	l.store("/bound/b/plugin.json", pkgfiles.Stat{Size: 10}, now, &Manifest{Name: "b"}, "")
	manifests.mu.Lock()
	_, hasA := manifests.byPath["/bound/a/plugin.json"]
	_, hasB := manifests.byPath["/bound/b/plugin.json"]
	n, bytes := len(manifests.byPath), manifests.bytes
	manifests.mu.Unlock()
	if hasA || !hasB || n != 1 || bytes != 10 {
		t.Errorf("after passing the bound: a cached %v, b cached %v, %d entries, %d bytes; want only b, 10 bytes", hasA, hasB, n, bytes)
	}
}
