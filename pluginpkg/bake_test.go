package pluginpkg

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestBakeLifecycle: an upgrade with a bake records it, with the version it
// replaced, in the state file and on the loaded package; RollbackBake of
// another digest changes nothing; RollbackBake of the baked digest returns
// to the previous version and ends the bake; EndBake ends only the bake of
// its digest; another upgrade replaces the bake.
func TestBakeLifecycle(t *testing.T) {
	home := t.TempDir()
	v := map[string]string{}
	for _, ver := range []string{"1.0.0", "2.0.0", "3.0.0"} {
		v[ver] = writeArchive(t, "tar.gz", pkgEntries("demo", ver))
	}
	bake := &Bake{Duration: time.Minute, MaxErrorRate: 0.25, MinCalls: 8, Digest: "ignored", FromVersion: "ignored"}
	if _, err := InstallSource(home, v["1.0.0"], InstallOptions{Bake: bake}); err == nil ||
		err.Error() != "install demo: bake: the package is not installed: there is no version to return to" {
		t.Fatalf("a first install with a bake: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "packages")); len(entries) != 0 {
		t.Fatalf("a refused install wrote %v", entries)
	}
	if _, err := InstallSource(home, v["1.0.0"], InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, PackagesDir, "demo")
	d1 := digestOf(t, dir)
	res, err := InstallSource(home, v["2.0.0"], InstallOptions{Upgrade: true, Bake: bake})
	if err != nil {
		t.Fatal(err)
	}
	d2 := res.Digest
	want := &Bake{Duration: time.Minute, MaxErrorRate: 0.25, MinCalls: 8, Digest: d2, FromVersion: "1.0.0", FromDigest: d1}
	if got := stateOf(t, home, "demo").Bake; !reflect.DeepEqual(got, want) {
		t.Errorf("state bake %+v, want %+v", got, want)
	}
	if !reflect.DeepEqual(res.Package.Bake, want) {
		t.Errorf("installed package's bake %+v, want %+v", res.Package.Bake, want)
	}
	data, _ := os.ReadFile(filepath.Join(home, StateFile))
	if !strings.Contains(string(data), `"duration": "1m"`) || !strings.Contains(string(data), `"from_version": "1.0.0"`) {
		t.Errorf("state file:\n%s", data)
	}
	inst, err := LoadInstalled(home)
	if err != nil || len(inst.Packages) != 1 || !reflect.DeepEqual(inst.Packages[0].Bake, want) {
		t.Fatalf("loaded bake: %v %+v", err, inst)
	}

	if _, err := RollbackBake(home, "demo", d1); !errors.Is(err, ErrBakeEnded) {
		t.Errorf("RollbackBake of another digest: %v", err)
	}
	if digestOf(t, dir) != d2 {
		t.Fatal("a refused RollbackBake changed the package")
	}
	if err := EndBake(home, "demo", d1); err != nil || stateOf(t, home, "demo").Bake == nil {
		t.Errorf("EndBake of another digest ended the bake: %v", err)
	}
	rb, err := RollbackBake(home, "demo", d2)
	if err != nil {
		t.Fatal(err)
	}
	if rb.Package.Manifest.Version.String() != "1.0.0" || digestOf(t, dir) != d1 || rb.Package.Bake != nil || stateOf(t, home, "demo").Bake != nil {
		t.Errorf("after RollbackBake: %+v, state %+v", rb.Package, stateOf(t, home, "demo"))
	}
	if _, err := RollbackBake(home, "demo", d2); !errors.Is(err, ErrBakeEnded) {
		t.Errorf("a second RollbackBake: %v", err)
	}

	if _, err := InstallSource(home, v["3.0.0"], InstallOptions{Upgrade: true, Bake: bake}); err != nil {
		t.Fatal(err)
	}
	d3 := digestOf(t, dir)
	if err := EndBake(home, "demo", d3); err != nil || stateOf(t, home, "demo").Bake != nil {
		t.Errorf("EndBake: %v, state %+v", err, stateOf(t, home, "demo"))
	}
	if _, err := InstallSource(home, v["2.0.0"], InstallOptions{Upgrade: true, Bake: bake}); err != nil {
		t.Fatal(err)
	}
	if _, err := InstallSource(home, v["1.0.0"], InstallOptions{Upgrade: true}); err != nil {
		t.Fatal(err)
	}
	if b := stateOf(t, home, "demo").Bake; b != nil {
		t.Errorf("an upgrade without a bake kept the one before: %+v", b)
	}
}

// TestBakeRefused: an invalid bake is refused before anything is
// written, naming the setting.
func TestBakeRefused(t *testing.T) {
	home := t.TempDir()
	if _, err := InstallSource(home, writeArchive(t, "tar.gz", pkgEntries("demo", "1.0.0")), InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	v2 := writeArchive(t, "tar.gz", pkgEntries("demo", "2.0.0"))
	for _, tt := range []struct {
		bake Bake
		want string
	}{
		{Bake{}, "bake: duration 0s is not positive"},
		{Bake{Duration: time.Second, MaxErrorRate: 1.5}, "bake: max error rate 1.5 is not between 0 and 1"},
		{Bake{Duration: time.Second, MinCalls: -1}, "bake: min calls -1 is negative"},
	} {
		before := snapshotTree(t, home)
		if _, err := InstallSource(home, v2, InstallOptions{Upgrade: true, Bake: &tt.bake}); err == nil || err.Error() != "install demo: "+tt.want {
			t.Errorf("bake %+v: %v, want %q", tt.bake, err, tt.want)
		}
		assertUnchanged(t, home, before)
	}
}

// TestBakeStateErrors: a bake in the state file that breaks its schema is
// a *StateError naming the package and the field.
func TestBakeStateErrors(t *testing.T) {
	d := strings.Repeat("a", 64)
	for _, tt := range []struct{ bake, want string }{
		{`{"duration": "0s", "digest": "` + d + `", "from_version": "1.0.0"}`, `"0s" is not a positive duration`},
		{`{"duration": "1m", "digest": "nope", "from_version": "1.0.0"}`, `packages["demo"].bake.digest: "nope" is not 64 lower-case hex digits`},
		{`{"duration": "1m", "max_error_rate": 2, "digest": "` + d + `", "from_version": "1.0.0"}`, `packages["demo"].bake.max_error_rate: 2 is not between 0 and 1`},
		{`{"duration": "1m", "digest": "` + d + `", "from_version": "1.0.0", "extra": 1}`, `unknown field "extra"`},
		{`{"digest": "` + d + `", "from_version": "1.0.0"}`, `packages["demo"].bake.duration: missing`},
	} {
		home := t.TempDir()
		state := `{"format": 1, "packages": {"demo": {"enabled": true, "bake": ` + tt.bake + `}}}`
		if err := os.WriteFile(filepath.Join(home, StateFile), []byte(state), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := readState(home)
		var se *StateError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("bake %s: %v, want a *StateError with %q", tt.bake, err, tt.want)
		}
	}
}
