//go:build unix

package sidecar

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/extkernel/extkernel/internal/pinexec"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
)

// installScript installs the bash-script fixture (manifest and plugin.sh)
// and puts a copy of bash alone on PATH, returning the package and the copy.
func installScript(t *testing.T) (*pluginpkg.Package, string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash:", err)
	}
	pathDir := t.TempDir()
	copyFile(t, bash, filepath.Join(pathDir, "bash"), 0o755)
	t.Setenv("PATH", pathDir)
	pkg := installFixture(t, "bash-script")
	copyFile(t, filepath.Join("..", "testdata", "plugins", "bash-script", "plugin.sh"), filepath.Join(pkg.Dir, "plugin.sh"), 0o644)
	return pkg, filepath.Join(pathDir, "bash")
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// TestPackagePin pins a bash-run plugin's package digest (its files and the
// bash found on PATH) and changes one of them: the script, a new file, or
// the interpreter. A changed package is refused before anything runs, with
// a *pinexec.PinMismatchError naming what changed; an unchanged one starts and
// runs.
func TestPackagePin(t *testing.T) {
	tests := []struct {
		name    string
		change  func(t *testing.T, pkg *pluginpkg.Package, bash string)
		changed string // "" = starts
	}{
		{"unchanged", func(*testing.T, *pluginpkg.Package, string) {}, ""},
		{"script edited", func(t *testing.T, pkg *pluginpkg.Package, _ string) {
			appendTo(t, filepath.Join(pkg.Dir, "plugin.sh"), "VERSION=v2\n")
		}, "package files"},
		{"file added", func(t *testing.T, pkg *pluginpkg.Package, _ string) {
			copyFile(t, filepath.Join(pkg.Dir, "plugin.sh"), filepath.Join(pkg.Dir, "lib.sh"), 0o644)
		}, "package files"},
		{"interpreter changed", func(t *testing.T, _ *pluginpkg.Package, bash string) { appendTo(t, bash, "\x00") },
			"interpreter BASH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkg, bash := installScript(t)
			pin, err := pkg.PackagePin()
			if err != nil {
				t.Fatal(err)
			}
			pkg.Pin = pin
			tt.change(t, pkg, bash)
			opts, _ := testOptions(t)
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			c, err := Start(ctx, pkg, opts)
			if tt.changed == "" {
				if err != nil {
					t.Fatalf("Start = %v", err)
				}
				out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "version"})
				if err != nil || string(out) != `"v1"` {
					t.Errorf("provider/invoke = %s, %v", out, err)
				}
				closeClient(t, c)
				return
			}
			var se *StartError
			var pe *pinexec.PinMismatchError
			if c != nil || !errors.As(err, &se) || se.Phase != phaseVerify || !errors.As(err, &pe) {
				t.Fatalf("Start = %v, %v; want a verify StartError wrapping a *pinexec.PinMismatchError", c, err)
			}
			want := pinexec.PinMismatchError{Plugin: "bash-script", Path: bash, Pinned: pin, Actual: pe.Actual,
				Changed: map[string]string{"interpreter BASH": "interpreter " + bash}[tt.changed]}
			if want.Changed == "" {
				want.Changed = tt.changed
			}
			if *pe != want || pe.Actual == pin || !pluginpkg.IsPackagePin(pe.Actual) {
				t.Errorf("PinMismatchError = %+v, want %+v", *pe, want)
			}
			wantMsg := `plugin "bash-script": verify: ` + want.Changed + ` changed since the package was pinned (pinned ` + pin +
				`, now ` + pe.Actual + `); re-pin it if the change is intended`
			if err.Error() != wantMsg {
				t.Errorf("err =\n%s\nwant\n%s", err, wantMsg)
			}
			assertNoProcesses(t)
		})
	}
}
