package pluginpkg

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// makeSource creates a package source directory with an executable and a
// symbolic link.
func makeSource(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src-"+name)
	writeFile(t, src, "plugin.json", `{"format":1,"name":"`+name+`","version":"1.0.0","runtime":{"command":"./bin/run"}}`)
	writeFile(t, src, "bin/run", "#!/bin/sh\necho hi\n")
	writeFile(t, src, "share/data.txt", "data")
	if err := os.Chmod(filepath.Join(src, "bin/run"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("bin/run", filepath.Join(src, "run-link")); err != nil {
		t.Fatal(err)
	}
	return src
}

func TestInstall(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home") // created by Install
	pkg, err := Install(home, makeSource(t, "demo"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "packages", "demo")
	if real, _ := filepath.EvalSymlinks(dir); pkg.Name != "demo" || !pkg.Enabled || pkg.Dir != real {
		t.Errorf("package = %+v", pkg)
	}
	fi, err := os.Stat(filepath.Join(dir, "bin/run"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("bin/run: %v %v", fi, err)
	}
	if link, err := os.Readlink(filepath.Join(dir, "run-link")); err != nil || link != "bin/run" {
		t.Errorf("run-link: %q %v", link, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "share/data.txt")); string(data) != "data" {
		t.Errorf("share/data.txt: %q %v", data, err)
	}
	cmd, err := pkg.CommandPath()
	if err != nil || cmd != filepath.Join(pkg.Dir, "bin/run") {
		t.Errorf("CommandPath = %q, %v", cmd, err)
	}
	assertState(t, home, `{"demo":{"enabled":true,"accepted_permissions":{"fs":{"read":["${package}"],"write":["${data}","${tmp}"]}}}}`)
	if d, err := pkg.FilesDigest(); err != nil || pkg.Digest != d.Sum {
		t.Errorf("Digest = %q, want the files digest %v (%v)", pkg.Digest, d, err)
	}

	if again, err := Install(home, makeSource(t, "demo")); err != nil || again.Digest != pkg.Digest {
		t.Errorf("Install of the same files again = %v, %v; want success, no change", again, err)
	}
	other := makeSource(t, "demo")
	writeFile(t, other, "share/data.txt", "other data")
	_, err = Install(home, other)
	if !errors.Is(err, ErrAlreadyInstalled) || !strings.Contains(err.Error(), `package "demo" in `+home) {
		t.Errorf("Install of other files: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "share/data.txt")); string(data) != "data" {
		t.Errorf("the refused install changed share/data.txt to %q", data)
	}
	entries, _ := os.ReadDir(filepath.Join(home, "packages"))
	if len(entries) != 1 {
		t.Errorf("packages/ holds %v, want only demo (no staging left behind)", entries)
	}
}

func TestInstallInvalid(t *testing.T) {
	src := t.TempDir()
	writeFile(t, src, "plugin.json", `{"format":1,"name":"x"}`)
	home := t.TempDir()
	_, err := Install(home, src)
	var ve *ValidationError
	if !errors.As(err, &ve) || err.Error() != filepath.Join(src, "plugin.json")+": version: required field is missing" {
		t.Errorf("Install invalid: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "packages")); err == nil {
		t.Error("Install of an invalid package created packages/")
	}
}

func TestInstallResetsStaleState(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, "state.json", `{"format":1,"packages":{"demo":{"enabled":false,"pin":"`+strings.Repeat("0", 64)+`"}}}`)
	if _, err := Install(home, makeSource(t, "demo")); err != nil {
		t.Fatal(err)
	}
	assertState(t, home, `{"demo":{"enabled":true,"accepted_permissions":{"fs":{"read":["${package}"],"write":["${data}","${tmp}"]}}}}`)
}

// assertState compares the packages map of home's state file, digests
// left out (installTest checks them).
func assertState(t *testing.T, home, wantPackages string) {
	t.Helper()
	st, err := readState(home)
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range st.Packages {
		e.Digest = ""
		st.Packages[name] = e
	}
	want, err := decodeState("want", []byte(`{"format":1,"packages":`+wantPackages+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st.Packages, want.Packages) {
		t.Errorf("state packages = %+v, want %+v", st.Packages, want.Packages)
	}
}

func TestStateOps(t *testing.T) {
	home := t.TempDir()
	for _, n := range []string{"a", "b"} {
		writeFile(t, home, "packages/"+n+"/plugin.json", manifestJSON(n))
	}
	pin := strings.Repeat("0f", 32)
	steps := []struct {
		name string
		op   func() error
		want string
	}{
		{"disable", func() error { return Disable(home, "a") }, `{"a":{"enabled":false}}`},
		{"pin", func() error { return Pin(home, "b", pin) }, `{"a":{"enabled":false},"b":{"enabled":true,"pin":"` + pin + `"}}`},
		{"enable keeps pin", func() error { return Enable(home, "a") }, `{"a":{"enabled":true},"b":{"enabled":true,"pin":"` + pin + `"}}`},
		{"unpin", func() error { return Pin(home, "b", "") }, `{"a":{"enabled":true},"b":{"enabled":true}}`},
		{"remove", func() error { return Remove(home, "a") }, `{"b":{"enabled":true}}`},
	}
	for _, s := range steps {
		if err := s.op(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		assertState(t, home, s.want)
	}
	if _, err := os.Stat(filepath.Join(home, "packages", "a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("packages/a after Remove: %v", err)
	}
	inst, err := LoadInstalled(home)
	if err != nil || len(inst.Packages) != 1 || len(inst.Warnings) != 0 {
		t.Errorf("after ops: %v %v", summary(inst), err)
	}
}

func TestStateOpsErrors(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, "packages/a/plugin.json", manifestJSON("a"))
	writeFile(t, home, "packages/file", "")
	ops := map[string]func(name string) error{
		"Enable":  func(n string) error { return Enable(home, n) },
		"Disable": func(n string) error { return Disable(home, n) },
		"Pin":     func(n string) error { return Pin(home, n, strings.Repeat("a", 64)) },
		"Remove":  func(n string) error { return Remove(home, n) },
	}
	for opName, op := range ops {
		for _, name := range []string{"nope", "", "..", "../a", ".hidden", "file"} {
			if opName == "Remove" && name == "file" {
				continue // Remove deletes any entry under packages/
			}
			err := op(name)
			want := fmt.Sprintf("package %q in %s: not installed", name, home)
			if !errors.Is(err, ErrNotInstalled) || err.Error() != want {
				t.Errorf("%s(%q) = %v, want %s", opName, name, err, want)
			}
		}
	}
	for _, bad := range []string{"abc", strings.Repeat("A", 64), strings.Repeat("a", 63), strings.Repeat("g", 64)} {
		if err := Pin(home, "a", bad); err == nil || errors.Is(err, ErrNotInstalled) {
			t.Errorf("Pin(%q) = %v", bad, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "state.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed operations wrote the state file: %v", err)
	}
}

func TestRemoveSymlinkedAndStale(t *testing.T) {
	home := t.TempDir()
	target := filepath.Join(t.TempDir(), "linked")
	writeFile(t, target, "plugin.json", manifestJSON("linked"))
	os.MkdirAll(filepath.Join(home, "packages"), 0o755)
	if err := os.Symlink(target, filepath.Join(home, "packages", "linked")); err != nil {
		t.Fatal(err)
	}
	if err := Remove(home, "linked"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(target, "plugin.json")); err != nil {
		t.Errorf("Remove deleted the symlink's target: %v", err)
	}
	writeFile(t, home, "state.json", `{"format":1,"packages":{"ghost":{"enabled":false}}}`)
	if err := Remove(home, "ghost"); err != nil {
		t.Errorf("Remove of a stale entry: %v", err)
	}
	assertState(t, home, `{}`)
	if err := Remove(home, "ghost"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("second Remove: %v", err)
	}
}

// TestConcurrentStateWrites runs 20 goroutines, each updating its own
// package several times; every last update must survive.
func TestConcurrentStateWrites(t *testing.T) {
	home := t.TempDir()
	const n = 20
	for i := range n {
		name := fmt.Sprintf("p%02d", i)
		writeFile(t, home, "packages/"+name+"/plugin.json", manifestJSON(name))
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if err := churn(home, fmt.Sprintf("p%02d", i), i); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkChurned(t, home, n)
}

// churn toggles package name and leaves it in a state derived from i: odd i
// disabled, pinned to pinFor(i).
func churn(home, name string, i int) error {
	for range 3 {
		if err := Disable(home, name); err != nil {
			return err
		}
		if err := Enable(home, name); err != nil {
			return err
		}
	}
	if err := Pin(home, name, pinFor(i)); err != nil {
		return err
	}
	if i%2 == 1 {
		return Disable(home, name)
	}
	return nil
}

func pinFor(i int) string { return fmt.Sprintf("%064x", i+1) }

func checkChurned(t *testing.T, home string, n int) {
	t.Helper()
	st, err := readState(home)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		name := fmt.Sprintf("p%02d", i)
		want := stateEntry{Enabled: i%2 == 0, Pin: pinFor(i)}
		if got, ok := st.Packages[name]; !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: state %+v (present %v), want %+v", name, got, ok, want)
		}
	}
}

// TestConcurrentStateWritesAcrossProcesses runs the churn in two helper
// processes and this one at once, on disjoint packages of one home: only the
// flock keeps them from losing each other's updates.
func TestConcurrentStateWritesAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns helper processes")
	}
	home := t.TempDir()
	const n = 12 // 4 per process
	for i := range n {
		name := fmt.Sprintf("p%02d", i)
		writeFile(t, home, "packages/"+name+"/plugin.json", manifestJSON(name))
	}
	var cmds []*exec.Cmd
	for proc := 1; proc <= 2; proc++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), "PLUGINPKG_HELPER_HOME="+home, fmt.Sprintf("PLUGINPKG_HELPER_PROC=%d", proc))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	if err := churnRange(home, 0, n); err != nil {
		t.Error(err)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper: %v", err)
		}
	}
	checkChurned(t, home, n)
}

// churnRange churns the packages i with i%3 == proc.
func churnRange(home string, proc, n int) error {
	for i := proc; i < n; i += 3 {
		if err := churn(home, fmt.Sprintf("p%02d", i), i); err != nil {
			return err
		}
	}
	return nil
}

// TestHelperProcess is the body of the helper processes; it does nothing in
// a normal test run.
func TestHelperProcess(t *testing.T) {
	home := os.Getenv("PLUGINPKG_HELPER_HOME")
	if home == "" {
		t.Skip("helper process only")
	}
	var proc int
	fmt.Sscan(os.Getenv("PLUGINPKG_HELPER_PROC"), &proc)
	if err := churnRange(home, proc, 12); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func TestPackageHelpers(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "x", "hello")
	sum, err := ExecutableSHA256(filepath.Join(dir, "x"))
	if err != nil || sum != "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" || !pkgfiles.ValidSHA256(sum) {
		t.Errorf("ExecutableSHA256 = %s, %v", sum, err)
	}
	f, err := os.Open(filepath.Join(dir, "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(3, io.SeekStart); err != nil { // FileSHA256 hashes from the start
		t.Fatal(err)
	}
	if fsum, err := FileSHA256(f); err != nil || fsum != sum {
		t.Errorf("FileSHA256 = %s, %v; want %s", fsum, err, sum)
	}
	m, err := Parse("p", []byte(`{"format":1,"name":"p","version":"1.2.3",
		"provides":[{"capability":"a","version":"1.0.0"}],
		"requires":[{"capability":"b","version":"^2","optional":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := &Package{Name: "p", Dir: dir, Manifest: m}
	if _, err := p.CommandPath(); !errors.Is(err, ErrNoRuntime) {
		t.Errorf("CommandPath without runtime: %v", err)
	}
	c := p.Capability()
	if c.Name != "p" || c.Enabled || c.Version.String() != "1.2.3" || len(c.Provides) != 1 || c.Provides[0].Key != "a" ||
		len(c.Requires) != 1 || c.Requires[0].Key != "b" || !c.Requires[0].Optional {
		t.Errorf("Capability() = %+v", c)
	}
	m.Runtime = &Runtime{Command: "sh"}
	if path, err := p.CommandPath(); err != nil || !filepath.IsAbs(path) {
		t.Errorf("CommandPath(sh) = %q, %v", path, err)
	}
	m.Runtime = &Runtime{Command: "./missing"}
	if _, err := p.CommandPath(); err == nil || !strings.Contains(err.Error(), `package "p": command "./missing"`) {
		t.Errorf("CommandPath(./missing) = %v", err)
	}
}

// TestInstallRefusesManifestOutside installs a directory whose plugin.json
// is a symbolic link out of it: refused by the link rule before anything
// is written.
func TestInstallRefusesManifestOutside(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "shared/plugin.json", manifestJSON("linked"))
	src := filepath.Join(root, "src")
	os.Mkdir(src, 0o755)
	if err := os.Symlink("../shared/plugin.json", filepath.Join(src, "plugin.json")); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), "home")
	_, err := Install(home, src)
	var se *SourceError
	if !errors.As(err, &se) || se.Rule != RuleLink || se.Entry != "plugin.json" || !errors.Is(err, ErrRefusedSource) {
		t.Fatalf("Install = %v, want a link *SourceError about plugin.json", err)
	}
	if _, err := os.Stat(home); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused install created the home: %v", err)
	}
}
