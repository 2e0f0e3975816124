package pluginpkg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/internal/homefile/homefiletest"
)

// TestHostileStateFile makes state.json each hostile kind of file: loading
// the home fails with a *StateError naming the file and the fault, and the
// writers refuse to replace it.
func TestHostileStateFile(t *testing.T) {
	for _, fault := range homefiletest.Faults(MaxStateSize) {
		t.Run(fault.Name, func(t *testing.T) {
			home := t.TempDir()
			writeFile(t, home, "packages/a/plugin.json", manifestJSON("a"))
			path := filepath.Join(home, StateFile)
			fault.Make(t, path)
			before, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = LoadInstalled(home)
			if !errors.Is(err, ErrCorruptState) || !errors.Is(err, fault.Is) {
				t.Errorf("LoadInstalled: %v; want a *StateError wrapping %v", err, fault.Is)
			}
			if want := path + ": corrupt state file: "; err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), fault.Says) {
				t.Errorf("LoadInstalled: %v; want %q followed by %q", err, want, fault.Says)
			}
			if err := Enable(home, "a"); !errors.Is(err, ErrCorruptState) {
				t.Errorf("Enable: %v, want ErrCorruptState", err)
			}
			if err := Disable(home, "a"); !errors.Is(err, ErrCorruptState) {
				t.Errorf("Disable: %v, want ErrCorruptState", err)
			}
			if after, err := os.Lstat(path); err != nil || after.Mode() != before.Mode() || after.Size() != before.Size() {
				t.Errorf("state.json was replaced: %v, %v", after, err)
			}
		})
	}
}

// TestExecutableSHA256RefusesNonRegular points an executable at each file
// that is not a regular file: hashing it fails at once, naming the path,
// instead of blocking on a FIFO or hashing /dev/zero forever.
func TestExecutableSHA256RefusesNonRegular(t *testing.T) {
	for _, fault := range homefiletest.Faults(MaxStateSize) {
		if !errors.Is(fault.Is, homefile.ErrNotRegular) {
			continue // executables have no size limit
		}
		t.Run(fault.Name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "plugin")
			fault.Make(t, path)
			if sum, err := ExecutableSHA256(path); !errors.Is(err, homefile.ErrNotRegular) || !strings.Contains(err.Error(), path) {
				t.Errorf("ExecutableSHA256 = %q, %v; want an error naming %s wrapping ErrNotRegular", sum, err, path)
			}
		})
	}
}
