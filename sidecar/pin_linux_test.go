package sidecar

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/plugintest"
	"github.com/extkernel/extkernel/pluginpkg"
)

// TestPinRunsTheHashedFile checks that a pinned package runs the file that
// was hashed, not one swapped in between the check and the exec (a hook
// renames the raw plugin over the SDK plugin there), that a file rewritten
// in place there is refused and its process discarded, and that a pinned
// script, which an interpreter reopens by path, still starts.
func TestPinRunsTheHashedFile(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		files    map[string]string // written into the package directory, mode 0755
		exe      string            // the pinned executable, in the package directory
		swap     string            // renamed over exe after the check, or ""
		rewrite  string            // copied into exe, in place, after the check, or ""
		want     []string          // the providers the started plugin declares
	}{
		{name: "binary rewritten after the check", manifest: plugintest.GoodManifest("p", false), exe: "good", rewrite: "faulty"},
		{name: "binary swapped after the check", manifest: plugintest.GoodManifest("p", false), exe: "good", swap: "faulty",
			want: []string{"block", "echo", "env", "fail", "notify", "progress"}},
		{name: "binary", manifest: plugintest.GoodManifest("p", false), exe: "good",
			want: []string{"block", "echo", "env", "fail", "notify", "progress"}},
		{name: "script", manifest: `{"format": 1, "name": "p", "version": "0.1.0", "runtime": {"command": "./run.sh"}}`,
			files: map[string]string{"run.sh": "#!/bin/sh\nexec ./faulty well-behaved\n"}, exe: "run.sh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.swap != "" || tt.rewrite != "" {
				needLinux(t, "exec through the hashed descriptor")
			}
			pkg := addPackage(t, t.TempDir(), "p", tt.manifest)
			for name, text := range tt.files {
				if err := os.WriteFile(filepath.Join(pkg.Dir, name), []byte(text), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			exe := filepath.Join(pkg.Dir, tt.exe)
			sum, err := pluginpkg.ExecutableSHA256(exe)
			if err != nil {
				t.Fatal(err)
			}
			pkg.Pin = sum
			if tt.rewrite != "" {
				privateCopy(t, exe) // not the binary the other tests link
			}
			hooked := false
			if tt.swap != "" || tt.rewrite != "" {
				beforeExec = func(path string) {
					if path != exe {
						t.Errorf("beforeExec(%s), want %s", path, exe)
					}
					hooked = true
					if tt.swap != "" {
						if err := os.Rename(filepath.Join(pkg.Dir, tt.swap), exe); err != nil {
							t.Error(err)
						}
						return
					}
					data, err := os.ReadFile(filepath.Join(pkg.Dir, tt.rewrite))
					if err == nil {
						err = os.WriteFile(exe, data, 0o755)
					}
					if err != nil {
						t.Error(err)
					}
				}
				t.Cleanup(func() { beforeExec = nil })
			}
			opts, _ := testOptions(t)
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			c, err := Start(ctx, pkg, opts)
			if hooked != (tt.swap != "" || tt.rewrite != "") {
				t.Fatal("the hook did not run")
			}
			if tt.rewrite != "" {
				var se *StartError
				if c != nil || !errors.As(err, &se) || se.Phase != phaseVerify ||
					!strings.Contains(err.Error(), "was modified between its pin check and its exec") {
					t.Fatalf("Start = %v, %v; want a verify StartError", c, err)
				}
				assertNoProcesses(t)
				return
			}
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			defer closeClient(t, c)
			var got []string
			for _, p := range c.Declarations().Providers {
				got = append(got, p.Ref)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("providers = %q, want %q (the pinned plugin's)", got, tt.want)
			}
		})
	}
}

// privateCopy replaces the file at path, a link to a shared test binary,
// with a copy of its own.
func privateCopy(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err == nil {
		err = os.Remove(path)
	}
	if err == nil {
		err = os.WriteFile(path, data, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}
