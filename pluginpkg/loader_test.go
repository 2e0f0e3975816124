package pluginpkg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	first := load(&l)
	if second := load(&l); second.Manifest != first.Manifest {
		t.Error("an unchanged manifest was parsed again")
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
