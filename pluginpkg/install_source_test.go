package pluginpkg

import (
	"archive/tar"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// writeDir writes entries as a package directory and returns it.
func writeDir(t testing.TB, entries []testEntry) string {
	t.Helper()
	dir := t.TempDir()
	for _, e := range entries {
		p := filepath.Join(dir, filepath.FromSlash(e.name))
		var err error
		switch e.typ {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeSymlink:
			os.MkdirAll(filepath.Dir(p), 0o755)
			err = os.Symlink(e.link, p)
		default:
			os.MkdirAll(filepath.Dir(p), 0o755)
			err = os.WriteFile(p, []byte(e.body), fs.FileMode(e.perm()))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// digestOf is the files digest of the package directory dir.
func digestOf(t testing.TB, dir string) string {
	t.Helper()
	d, err := (pkgfiles.Ref{Name: "test", Dir: dir}).FilesDigest()
	if err != nil {
		t.Fatal(err)
	}
	return d.Sum
}

// stateOf returns home's state entry for name.
func stateOf(t testing.TB, home, name string) stateEntry {
	t.Helper()
	st, err := readState(home)
	if err != nil {
		t.Fatal(err)
	}
	return st.Packages[name]
}

// TestInstallSourceKinds installs the same package from a directory, a
// tar.gz (inside one top-level directory, with a pax global header as git
// archive writes) and a zip: each installs the same files, modes and
// links, leaves caches out, and records the same digest.
func TestInstallSourceKinds(t *testing.T) {
	entries := append(pkgEntries("demo", "1.0.0"),
		testEntry{name: "__pycache__/x.pyc", body: "cache"}, testEntry{name: "lib/.git/config", body: "vcs"})
	var wrapped []testEntry
	wrapped = append(wrapped, testEntry{name: "pax_global_header", typ: tar.TypeXGlobalHeader}, testEntry{name: "demo-1.0.0/", typ: tar.TypeDir})
	for _, e := range entries {
		e.name = "demo-1.0.0/" + e.name
		wrapped = append(wrapped, e)
	}
	sources := []struct {
		kind SourceKind
		path string
	}{
		{SourceDir, writeDir(t, entries)},
		{SourceTarGz, writeArchive(t, "tar.gz", wrapped)},
		{SourceZip, writeArchive(t, "zip", entries)},
	}
	var digests []string
	for _, src := range sources {
		t.Run(string(src.kind), func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			var steps []InstallStep
			res, err := InstallSource(home, src.path, InstallOptions{OnStep: func(s InstallStep) { steps = append(steps, s) }})
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(home, "packages", "demo")
			modes := map[string]fs.FileMode{"bin/run": 0o755, "share/data.txt": 0o644, "plugin.json": 0o644, "bin": fs.ModeDir | 0o755}
			for name, want := range modes {
				if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || fi.Mode() != want {
					t.Errorf("%s: %v %v, want mode %v", name, fi, err, want)
				}
			}
			if link, err := os.Readlink(filepath.Join(dir, "run-link")); err != nil || link != "bin/run" {
				t.Errorf("run-link: %q %v", link, err)
			}
			for _, gone := range []string{"__pycache__", "lib/.git"} {
				if _, err := os.Lstat(filepath.Join(dir, gone)); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s was installed: %v", gone, err)
				}
			}
			if _, err := os.Lstat(filepath.Join(home, "packages", StagingDir)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("packages/.staging left behind: %v", err)
			}
			d := digestOf(t, dir)
			if res.Source != src.kind || res.Digest != d || res.Package.Digest != d || !reflect.DeepEqual(stateOf(t, home, "demo"), stateEntry{Enabled: true, Digest: d, Accepted: MinimalPermissions()}) ||
				res.Unchanged || res.Previous != nil || !res.Package.Enabled {
				t.Errorf("result %+v, state %+v; want digest %s", res, stateOf(t, home, "demo"), d)
			}
			if want := []InstallStep{StepExtracted, StepSynced, StepPlaced}; !slices.Equal(steps, want) {
				t.Errorf("steps %v, want %v", steps, want)
			}
			inst, err := LoadInstalled(home)
			if err != nil || len(inst.Packages) != 1 || len(inst.Warnings) != 0 || inst.Packages[0].Digest != d {
				t.Errorf("LoadInstalled: %v %v", summary(inst), err)
			}
			digests = append(digests, d)
		})
	}
	if len(slices.Compact(digests)) != 1 {
		t.Errorf("the kinds installed different files: digests %v", digests)
	}
}

// withFallback runs f with exchange failing as it does outside Linux, so
// that the two-rename paths are taken.
func withFallback(t *testing.T, fallback bool) {
	if !fallback {
		return
	}
	saved := exchange
	exchange = func(string, string) error { return errNoExchange }
	t.Cleanup(func() { exchange = saved })
}

// TestUpgradeAndRollback upgrades a disabled, pinned package twice, rolls
// back and forward, and removes it, with the atomic exchange and with
// the fallback renames.
func TestUpgradeAndRollback(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		t.Run(map[bool]string{false: "exchange", true: "renames"}[fallback], func(t *testing.T) {
			withFallback(t, fallback)
			home := t.TempDir()
			v := map[string]string{}
			for _, ver := range []string{"1.0.0", "2.0.0", "3.0.0"} {
				v[ver] = writeArchive(t, "tar.gz", pkgEntries("demo", ver))
			}
			if _, err := InstallSource(home, v["1.0.0"], InstallOptions{}); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(home, "packages", "demo")
			d1 := digestOf(t, dir)
			pin := "package:" + strings.Repeat("a", 64) + ":" + strings.Repeat("b", 64)
			if err := errors.Join(Disable(home, "demo"), Pin(home, "demo", pin)); err != nil {
				t.Fatal(err)
			}
			before := snapshotTree(t, home)
			if _, err := InstallSource(home, v["2.0.0"], InstallOptions{}); !errors.Is(err, ErrAlreadyInstalled) ||
				!strings.Contains(err.Error(), "version 1.0.0 is installed, and the source (version 2.0.0) holds other files") {
				t.Errorf("install over 1.0.0: %v", err)
			}
			assertUnchanged(t, home, before)

			var steps []InstallStep
			res, err := InstallSource(home, v["2.0.0"], InstallOptions{Upgrade: true, OnStep: func(s InstallStep) { steps = append(steps, s) }})
			if err != nil {
				t.Fatal(err)
			}
			d2 := digestOf(t, dir)
			want := []InstallStep{StepExtracted, StepSynced, StepPlaced}
			if fallback {
				want = []InstallStep{StepExtracted, StepSynced, StepMovedAside, StepPlaced}
			}
			if !slices.Equal(steps, want) {
				t.Errorf("steps %v, want %v", steps, want)
			}
			if res.Previous == nil || res.Previous.Manifest.Version.String() != "1.0.0" || res.PreviousDigest != d1 || res.Digest != d2 ||
				!reflect.DeepEqual(res.Changed, []string{"bin/run", "plugin.json", "share/data.txt"}) ||
				res.Package.Manifest.Version.String() != "2.0.0" || res.Package.Enabled || res.Package.Pin != pin {
				t.Errorf("upgrade result %+v", res)
			}
			if got := stateOf(t, home, "demo"); !reflect.DeepEqual(got, stateEntry{Enabled: false, Pin: pin, Digest: d2, Accepted: MinimalPermissions()}) {
				t.Errorf("state after upgrade %+v", got)
			}
			prev := filepath.Join(home, "packages", PreviousDir, "demo")
			if digestOf(t, prev) != d1 {
				t.Errorf(".previous/demo does not hold 1.0.0")
			}
			if _, err := InstallSource(home, v["3.0.0"], InstallOptions{Upgrade: true}); err != nil {
				t.Fatal(err)
			}
			d3 := digestOf(t, dir)
			if digestOf(t, prev) != d2 {
				t.Errorf("after a second upgrade .previous/demo does not hold 2.0.0")
			}
			for _, step := range []struct{ now, kept string }{{d2, d3}, {d3, d2}} {
				res, err := Rollback(home, "demo")
				if err != nil {
					t.Fatal(err)
				}
				if digestOf(t, dir) != step.now || digestOf(t, prev) != step.kept || res.Digest != step.now ||
					res.PreviousDigest != step.kept || !reflect.DeepEqual(stateOf(t, home, "demo"), stateEntry{Pin: pin, Digest: step.now, Accepted: MinimalPermissions()}) {
					t.Errorf("rollback: result %+v state %+v", res, stateOf(t, home, "demo"))
				}
			}
			if err := Remove(home, "demo"); err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(filepath.Join(home, "packages"))
			if len(entries) != 0 {
				t.Errorf("after Remove packages/ holds %v", entries)
			}
			if _, err := Rollback(home, "demo"); !errors.Is(err, ErrNoPrevious) || err.Error() != `package "demo" in `+home+": no previous version kept" {
				t.Errorf("Rollback after Remove: %v", err)
			}
		})
	}
}

// TestInstallIdentical reinstalls the installed files: nothing is
// replaced, and a missing digest (left by an install killed before its
// state write) is recorded.
func TestInstallIdentical(t *testing.T) {
	home := t.TempDir()
	src := writeArchive(t, "zip", pkgEntries("demo", "1.0.0"))
	first, err := InstallSource(home, src, InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, home, StateFile, `{"format":1,"packages":{"demo":{"enabled":false}}}`)
	var steps []InstallStep
	res, err := InstallSource(home, src, InstallOptions{OnStep: func(s InstallStep) { steps = append(steps, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Unchanged || res.Digest != first.Digest || res.Previous != nil || !slices.Equal(steps, []InstallStep{StepExtracted, StepSynced}) {
		t.Errorf("result %+v, steps %v", res, steps)
	}
	if got := stateOf(t, home, "demo"); got != (stateEntry{Enabled: false, Digest: first.Digest}) {
		t.Errorf("state %+v: want the digest recorded, disabled kept", got)
	}
	if _, err := os.Lstat(filepath.Join(home, "packages", PreviousDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an unchanged install kept a previous version: %v", err)
	}
}

// TestInstallCleansLeftovers leaves what killed installs and removes leave
// behind: LoadInstalled ignores it, and the next install deletes it.
func TestInstallCleansLeftovers(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, "packages/.staging/demo-123/demo/plugin.json", pkgManifest("demo", "9.0.0"))
	writeFile(t, home, "packages/.install-demo-1/plugin.json", pkgManifest("demo", "8.0.0"))
	writeFile(t, home, "packages/.remove-old-2/old/plugin.json", manifestJSON("old"))
	inst, err := LoadInstalled(home)
	if err != nil || len(inst.Packages) != 0 || len(inst.Warnings) != 0 {
		t.Fatalf("LoadInstalled with leftovers: %v %v", summary(inst), err)
	}
	if _, err := InstallSource(home, writeArchive(t, "tar.gz", pkgEntries("demo", "1.0.0")), InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(home, "packages"))
	if len(entries) != 1 || entries[0].Name() != "demo" {
		t.Errorf("packages/ holds %v, want only demo", entries)
	}
}

// TestInstallFailuresLeaveHome makes an install and an upgrade fail: with
// a full disk while extracting, and when the state file cannot be
// written once the package is in place. Each time the home is left as it
// was (the package dir, its previous version and the state file).
func TestInstallFailuresLeaveHome(t *testing.T) {
	full := func(t *testing.T) {
		saved := createFile
		n := 0
		createFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
			if n++; n == 2 {
				return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOSPC}
			}
			return saved(name, flag, perm)
		}
		t.Cleanup(func() { createFile = saved })
	}
	for _, fallback := range []bool{false, true} {
		for _, upgrade := range []bool{false, true} {
			for _, fault := range []string{"full disk", "state write"} {
				name := fault + map[bool]string{false: " install", true: " upgrade"}[upgrade] + map[bool]string{false: "", true: " renames"}[fallback]
				t.Run(name, func(t *testing.T) {
					withFallback(t, fallback)
					home := t.TempDir()
					if upgrade {
						for _, ver := range []string{"1.0.0", "2.0.0"} {
							if _, err := InstallSource(home, writeArchive(t, "tar.gz", pkgEntries("demo", ver)), InstallOptions{Upgrade: true}); err != nil {
								t.Fatal(err)
							}
						}
					}
					pkgs := filepath.Join(home, "packages")
					os.MkdirAll(pkgs, 0o755)
					state, _ := os.ReadFile(filepath.Join(home, StateFile))
					before := map[string]map[string]string{}
					for _, d := range []string{"demo", PreviousDir} {
						before[d] = snapshotFiles(t, filepath.Join(pkgs, d))
					}
					opts := InstallOptions{Upgrade: true}
					if fault == "full disk" {
						full(t)
					} else {
						opts.OnStep = func(s InstallStep) {
							if s == StepPlaced { // a non-empty directory cannot be renamed over
								os.Remove(filepath.Join(home, StateFile))
								writeFile(t, home, StateFile+"/x", "")
							}
						}
					}
					_, err := InstallSource(home, writeArchive(t, "tar.gz", pkgEntries("demo", "3.0.0")), opts)
					if err == nil || fault == "full disk" && !errors.Is(err, syscall.ENOSPC) {
						t.Fatalf("InstallSource = %v, want it to fail (with ENOSPC for a full disk)", err)
					}
					if fault == "state write" {
						os.RemoveAll(filepath.Join(home, StateFile))
						if state != nil {
							os.WriteFile(filepath.Join(home, StateFile), state, 0o644)
						}
					}
					for d, snap := range before {
						assertUnchanged(t, filepath.Join(pkgs, d), snap, false)
					}
					if now, _ := os.ReadFile(filepath.Join(home, StateFile)); string(now) != string(state) {
						t.Errorf("state.json changed:\n%s", now)
					}
					if _, err := os.Lstat(filepath.Join(pkgs, StagingDir)); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("packages/.staging left behind: %v", err)
					}
				})
			}
		}
	}
}
