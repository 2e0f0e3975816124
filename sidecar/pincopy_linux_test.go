package sidecar

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
)

// TestPackagePinExecsTheHashedCommand pins a package and, in the moment
// between the pin check and the exec, renames another file over the
// command the pin covers, or rewrites that command in place: the bash
// found on PATH (a script that would mark that it ran, then run bash), or
// the package's own binary (the faulty test plugin over the good one).
// What was renamed over does not run: the command is exec'd through the
// descriptor that was hashed, as an executable pin's binary is. A command
// rewritten in place is caught after the exec and its process discarded.
func TestPackagePinExecsTheHashedCommand(t *testing.T) {
	needLinux(t, "exec through the hashed descriptor")
	realBash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash:", err)
	}
	faulty, err := os.ReadFile(filepath.Join(binDir, "faulty"))
	if err != nil {
		t.Fatal(err)
	}
	marker := "#!/bin/sh\n: > \"$EXTKERNEL_DATA_DIR/swapped-ran\"\nexec " + realBash + " \"$@\"\n"
	tests := []struct {
		name    string
		install func(t *testing.T) (pkg *pluginpkg.Package, command string)
		swapped string // what is renamed over the command, or written into it
		rewrite bool
	}{
		{"interpreter renamed over", installScript, marker, false},
		{"interpreter rewritten in place", installScript, "", true},
		{"binary renamed over", installGoodPrivate, string(faulty), false},
		{"binary rewritten in place", installGoodPrivate, string(faulty), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pkg, command := tt.install(t)
			pin, err := pkg.PackagePin()
			if err != nil {
				t.Fatal(err)
			}
			pkg.Pin = pin
			opts, _ := testOptions(t)
			beforeExec = func(path string) {
				if path != command {
					t.Errorf("beforeExec(%s), want %s", path, command)
				}
				switch {
				case tt.rewrite && tt.swapped == "":
					appendTo(t, command, "\x00")
				case tt.rewrite:
					rewriteInPlace(t, command, tt.swapped)
				default:
					renameOver(t, command, tt.swapped)
					if err := os.Chmod(command, 0o755); err != nil {
						t.Error(err)
					}
				}
			}
			t.Cleanup(func() { beforeExec = nil })
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			c, err := Start(ctx, pkg, opts)
			if tt.rewrite {
				if c != nil {
					closeClient(t, c)
				}
				var se *StartError
				if c != nil || !errors.As(err, &se) || se.Phase != phaseVerify ||
					!strings.Contains(err.Error(), "executable "+command+" was modified between its pin check and its exec") {
					t.Fatalf("Start = %v, %v; want a verify StartError", c, err)
				}
				assertNoProcesses(t)
				return
			}
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			defer closeClient(t, c)
			if pkg.Name == "p" {
				var got []string
				for _, p := range c.Declarations().Providers {
					got = append(got, p.Ref)
				}
				slices.Sort(got)
				if want := []string{"block", "echo", "env", "fail", "notify", "progress"}; !slices.Equal(got, want) {
					t.Errorf("providers = %q, want %q (the pinned plugin's)", got, want)
				}
				return
			}
			out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "version"})
			if err != nil || string(out) != `"v1"` {
				t.Errorf("provider/invoke = %s, %v", out, err)
			}
			if _, err := os.Stat(filepath.Join(opts.DataRoot, pkg.Name, "swapped-ran")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the interpreter renamed over the pinned one ran: %v", err)
			}
		})
	}
}

// installGoodPrivate installs the good plugin alone as package p, with a
// copy of the binary of its own, and returns it and the binary's path.
func installGoodPrivate(t *testing.T) (*pluginpkg.Package, string) {
	pkg := installGood(t)
	path := filepath.Join(pkg.Dir, "good")
	privateCopy(t, path)
	return pkg, path
}
