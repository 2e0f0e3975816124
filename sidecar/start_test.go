//go:build unix

package sidecar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/pinexec"
	"github.com/extkernel/extkernel/internal/process"
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
		var pe *pinexec.PinMismatchError
		if c != nil || !errors.As(err, &se) || se.Phase != phaseVerify || !errors.As(err, &pe) {
			t.Fatalf("Start = %v, %v; want a verify StartError wrapping a *pinexec.PinMismatchError", c, err)
		}
		path := filepath.Join(pkg.Dir, "good")
		if *pe != (pinexec.PinMismatchError{Plugin: "good", Path: path, Pinned: other, Actual: sum}) {
			t.Errorf("pinexec.PinMismatchError = %+v", *pe)
		}
		want := `plugin "good": verify: executable ` + path + ` has sha256 ` + sum + `, but the package is pinned to ` + other + `; re-pin it if the change is intended`
		if err.Error() != want {
			t.Errorf("err =\n%s\nwant\n%s", err, want)
		}
		if want := `plugin "good": executable ` + path + ` has sha256 ` + sum; !strings.HasPrefix(pe.Error(), want) {
			t.Errorf("pinexec.PinMismatchError.Error() = %s, want prefix %s", pe, want)
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
	if c != nil || !errors.As(err, &se) || se.Phase != phaseSpawn || !errors.Is(err, pluginpkg.ErrCommandOutside) {
		t.Fatalf("Start = %v, %v; want a spawn StartError matching ErrCommandOutside", c, err)
	}
	if !strings.Contains(err.Error(), `command "./good" resolves to `) || !strings.Contains(err.Error(), "outside the package directory") {
		t.Errorf("err = %v, want both paths named", err)
	}
	assertNoProcesses(t)
}

// TestLimits starts the good plugin with resource limits and reads them
// back from /proc/<pid>/limits.
func TestLimits(t *testing.T) {
	opts, _ := testOptions(t)
	opts.Limits = pluginpkg.ResourceLimits{OpenFiles: 64, AddressSpace: 4 << 30}
	if process.Portable {
		testLimitsUnsupported(t, opts)
		return
	}
	c := startGood(t, opts)
	defer closeClient(t, c)
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", c.PID()))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"Max open files":    {"64", "64", "files"},
		"Max address space": {"4294967296", "4294967296", "bytes"},
	}
	for _, line := range strings.Split(string(data), "\n") {
		for name, fields := range want {
			if rest, ok := strings.CutPrefix(line, name+" "); ok {
				if got := strings.Fields(rest); !slices.Equal(got, fields) {
					t.Errorf("%s = %q, want %q", name, got, fields)
				}
				delete(want, name)
			}
		}
	}
	if len(want) != 0 {
		t.Errorf("limits not found: %v\n%s", want, data)
	}
	// The plugin works within them.
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := ping(c, ctx); err != nil {
		t.Errorf("Ping = %v", err)
	}
}

// TestLimitsRefused asks for more open files than the kernel allows any
// process (fs.nr_open): Start fails in phaseLimits and stops the process.
func TestLimitsRefused(t *testing.T) {
	needLinux(t, "resource limits")
	opts, _ := testOptions(t)
	opts.shutdownGrace, opts.killGrace = 500*time.Millisecond, 500*time.Millisecond
	opts.Limits = pluginpkg.ResourceLimits{OpenFiles: 1 << 40}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	c, err := Start(ctx, installFixture(t, "good"), opts)
	var se *StartError
	if c != nil || !errors.As(err, &se) || se.Phase != phaseLimits || !strings.Contains(err.Error(), "set open files limit to 1099511627776") {
		t.Fatalf("Start = %v, %v; want a limits StartError", c, err)
	}
	assertNoProcesses(t)
}

// testLimitsUnsupported checks that where limits cannot be applied (the
// portable fallbacks), Start refuses them before anything runs, in
// phaseLimits, with an error wrapping errors.ErrUnsupported.
func testLimitsUnsupported(t *testing.T, opts Options) {
	c, err := Start(context.Background(), installFixture(t, "well-behaved"), opts)
	var se *StartError
	if c != nil || !errors.As(err, &se) || se.Phase != phaseLimits || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Start = %v, %v; want a phaseLimits StartError wrapping errors.ErrUnsupported", c, err)
	}
	assertNoProcesses(t)
}
