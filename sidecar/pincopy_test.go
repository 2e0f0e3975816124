//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/extkernel/extkernel/internal/pinexec"
	"github.com/extkernel/extkernel/internal/plugintest"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
)

// installGood installs the good plugin alone (its manifest and binary) as
// package p.
func installGood(t *testing.T) *pluginpkg.Package {
	t.Helper()
	pkg := plugintestInstall(t, "p", plugintest.GoodManifest("p", false))
	if err := os.Link(filepath.Join(binDir, "good"), filepath.Join(pkg.Dir, "good")); err != nil {
		t.Fatal(err)
	}
	return pkg
}

// privateTemp points TMPDIR, where verified copies are made, at an empty
// directory of the test's, and returns it. Call it after every t.TempDir
// the test needs.
func privateTemp(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

// entries lists dir's entries.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// pluginWhere asks the good plugin's provider "env" where it runs: its
// working directory and EXTKERNEL_PLUGIN_DIR.
func pluginWhere(t *testing.T, c *Client) (cwd, pluginDir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "env"})
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Env []string `json:"env"`
		Cwd string   `json:"cwd"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	for _, kv := range res.Env {
		if v, ok := strings.CutPrefix(kv, wire.EnvPluginDir+"="); ok {
			pluginDir = v
		}
	}
	return res.Cwd, pluginDir
}

// TestPackagePinRunsFromCopy starts the good plugin unpinned, with an
// executable pin and with a package pin. Only the package pin runs it from
// a copy: a directory of its own in TMPDIR (mode 0700, files read-only,
// the package's files and nothing else), its working directory and
// EXTKERNEL_PLUGIN_DIR. The copy is gone once the client is closed, once
// the plugin crashed (before Done closes), and after a refused start.
func TestPackagePinRunsFromCopy(t *testing.T) {
	tests := []struct {
		name string
		pin  string // "executable", "package" or ""
		end  string // "close", "crash"; "refused": the package changed after the pin
	}{
		{"unpinned", "", "close"},
		{"executable pin", "executable", "close"},
		{"package pin, closed", "package", "close"},
		{"package pin, crashed", "package", "crash"},
		{"package pin, refused", "package", "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkg := installGood(t)
			var err error
			switch tt.pin {
			case "executable":
				pkg.Pin, err = pluginpkg.ExecutableSHA256(filepath.Join(pkg.Dir, "good"))
			case "package":
				pkg.Pin, err = pkg.PackagePin()
			}
			if err != nil {
				t.Fatal(err)
			}
			opts, _ := testOptions(t)
			tmp := privateTemp(t)
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			if tt.end == "refused" {
				appendTo(t, filepath.Join(pkg.Dir, pluginpkg.ManifestFile), "\n")
				c, err := Start(ctx, pkg, opts)
				var pe *pinexec.PinMismatchError
				if c != nil || !errors.As(err, &pe) || pe.Changed != "package files" {
					t.Fatalf("Start = %v, %v; want a *pinexec.PinMismatchError for the package files", c, err)
				}
				if left := entries(t, tmp); len(left) != 0 {
					t.Errorf("left in TMPDIR after a refused start: %q", left)
				}
				return
			}
			c, err := Start(ctx, pkg, opts)
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			cwd, dir := pluginWhere(t, c)
			if cwd != dir {
				t.Errorf("working directory %s, EXTKERNEL_PLUGIN_DIR %s; want the same", cwd, dir)
			}
			if tt.pin != "package" {
				if dir != pkg.Dir || len(entries(t, tmp)) != 0 {
					t.Errorf("runs in %s with %q in TMPDIR; want the package directory %s, and no copy", dir, entries(t, tmp), pkg.Dir)
				}
				closeClient(t, c)
				return
			}
			if filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), "extkernel-p-") {
				t.Errorf("runs in %s; want a copy extkernel-p-* in TMPDIR %s", dir, tmp)
			}
			assertCopy(t, dir, map[string]os.FileMode{".": 0o700 | os.ModeDir, pluginpkg.ManifestFile: 0o400, "good": 0o500})
			switch tt.end {
			case "close":
				closeClient(t, c)
			case "crash":
				if err := syscall.Kill(c.PID(), syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				recv(t, c.Done(), "crash")
				if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the copy %s is still there once Done closed: %v", dir, err)
				}
				closeClient(t, c)
			}
			if left := entries(t, tmp); len(left) != 0 {
				t.Errorf("left in TMPDIR after %s: %q", tt.end, left)
			}
		})
	}
}

// assertCopy checks that dir holds exactly the entries of want, with
// their modes.
func assertCopy(t *testing.T, dir string, want map[string]os.FileMode) {
	t.Helper()
	var got []string
	for name, mode := range want {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		if fi.Mode() != mode {
			t.Errorf("%s in the copy has mode %v, want %v", name, fi.Mode(), mode)
		}
		if name != "." {
			got = append(got, name)
		}
	}
	slices.Sort(got)
	if all := entries(t, dir); !slices.Equal(all, got) {
		t.Errorf("the copy holds %q, want %q", all, got)
	}
}
