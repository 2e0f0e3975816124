package sidecar

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/pluginpkg"
)

// TestPinnedExecutable starts the good plugin pinned to its own sha256 and
// to another one: the first starts, the second is refused before anything
// runs, with both hashes in the error.
func TestPinnedExecutable(t *testing.T) {
	sum, err := pluginpkg.ExecutableSHA256(filepath.Join(binDir, "good"))
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Repeat("0", 64)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()

	t.Run("match", func(t *testing.T) {
		opts, _ := testOptions(t)
		pkg := installFixture(t, "good")
		pkg.Pin = sum
		c, err := Start(ctx, pkg, opts)
		if err != nil {
			t.Fatalf("Start = %v", err)
		}
		closeClient(t, c)
	})
	t.Run("mismatch", func(t *testing.T) {
		opts, _ := testOptions(t)
		pkg := installFixture(t, "good")
		pkg.Pin = other
		c, err := Start(ctx, pkg, opts)
		var se *StartError
		var pe *PinMismatchError
		if c != nil || !errors.As(err, &se) || se.Phase != PhaseVerify || !errors.As(err, &pe) {
			t.Fatalf("Start = %v, %v; want a verify StartError wrapping a *PinMismatchError", c, err)
		}
		path := filepath.Join(pkg.Dir, "good")
		if *pe != (PinMismatchError{Plugin: "good", Path: path, Pinned: other, Actual: sum}) {
			t.Errorf("PinMismatchError = %+v", *pe)
		}
		want := `plugin "good": verify: executable ` + path + ` has sha256 ` + sum + `, but the package is pinned to ` + other + `; re-pin it if the change is intended`
		if err.Error() != want {
			t.Errorf("err =\n%s\nwant\n%s", err, want)
		}
		if want := `plugin "good": executable ` + path + ` has sha256 ` + sum; !strings.HasPrefix(pe.Error(), want) {
			t.Errorf("PinMismatchError.Error() = %s, want prefix %s", pe, want)
		}
		assertNoProcesses(t)
	})
}

// TestCommandEscapingThroughSymlink replaces the good plugin's executable
// with a link to the same binary outside the package directory: Start
// refuses it without running anything.
func TestCommandEscapingThroughSymlink(t *testing.T) {
	opts, _ := testOptions(t)
	pkg := installFixture(t, "good")
	exe := filepath.Join(pkg.Dir, "good")
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(binDir, "good"), exe); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	c, err := Start(ctx, pkg, opts)
	var se *StartError
	if c != nil || !errors.As(err, &se) || se.Phase != PhaseSpawn || !errors.Is(err, pluginpkg.ErrCommandOutside) {
		t.Fatalf("Start = %v, %v; want a spawn StartError matching ErrCommandOutside", c, err)
	}
	if !strings.Contains(err.Error(), `command "./good" resolves to `) || !strings.Contains(err.Error(), "outside the package directory") {
		t.Errorf("err = %v, want both paths named", err)
	}
	assertNoProcesses(t)
}
