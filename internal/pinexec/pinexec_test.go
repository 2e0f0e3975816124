//go:build unix

package pinexec

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/pkgfiles"
	"github.com/extkernel/extkernel/internal/process"
)

// binaryPackage writes a package whose command ./bin is a copy of the
// system's true(1), and returns its Ref.
func binaryPackage(t *testing.T) pkgfiles.Ref {
	t.Helper()
	bin, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true:", err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bin"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return pkgfiles.Ref{Name: "p", Dir: dir, Command: "./bin"}
}

// tempDir points TMPDIR, where copies are made, at an empty directory and
// returns it.
func tempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

// TestVerifyPackagePin verifies a package pin: the Verified runs the copy's
// command (through its descriptor where the system allows it) in the copy,
// which Remove removes. A package changed since the pin is refused and no
// copy is left.
func TestVerifyPackagePin(t *testing.T) {
	r := binaryPackage(t)
	pin, err := r.PackagePin()
	if err != nil {
		t.Fatal(err)
	}
	path, err := r.CommandPath()
	if err != nil {
		t.Fatal(err)
	}
	tmp := tempDir(t)

	v, err := Verify(r, pin, path)
	if err != nil {
		t.Fatal(err)
	}
	v.Release()
	if v.Copy == nil || v.Dir != v.Copy.Dir || filepath.Dir(v.Dir) != tmp {
		t.Fatalf("Verified %+v; want a copy in %s", v, tmp)
	}
	wantPath := filepath.Join(v.Dir, "bin")
	if !process.Portable {
		wantPath = "/proc/self/fd/"
	}
	if !strings.HasPrefix(v.Path, wantPath) {
		t.Errorf("Path = %s, want %s...", v.Path, wantPath)
	}
	if err := os.Chmod(v.Dir, 0o500); err != nil { // as a plugin could
		t.Fatal(err)
	}
	if err := v.Copy.Remove(); err != nil {
		t.Errorf("Remove: %v", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left after Remove: %v", left)
	}

	if err := os.WriteFile(filepath.Join(r.Dir, "extra"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Verify(r, pin, path)
	var pe *PinMismatchError
	if !errors.As(err, &pe) || pe.Changed != "package files" || pe.Path != path {
		t.Errorf("Verify of a changed package = %v; want a *PinMismatchError for the package files", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left after a refused Verify: %v", left)
	}
}

// TestVerifyUnpinned opens and copies nothing.
func TestVerifyUnpinned(t *testing.T) {
	r := binaryPackage(t)
	tmp := tempDir(t)
	v, err := Verify(r, "", "/some/path")
	if err != nil || v.Path != "/some/path" || v.Dir != r.Dir || v.Copy != nil || v.f != nil {
		t.Errorf("Verify without a pin = %+v, %v", v, err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left: %v", left)
	}
}
