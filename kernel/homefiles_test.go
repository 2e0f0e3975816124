package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/homefile/homefiletest"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/pluginpkg"
)

// homeFile is one kind of file the kernel or kernelctl reads, with the call
// that reads it.
type homeFile struct {
	name  string
	limit int64
	// at returns where the file lives in home.
	at func(home string) string
	// read reads it and returns the error to check.
	read func(t *testing.T, home, path string) error
}

var homeFiles = []homeFile{
	{"state.json", pluginpkg.MaxStateSize,
		func(home string) string { return filepath.Join(home, pluginpkg.StateFile) },
		func(t *testing.T, home, _ string) error {
			_, err := pluginpkg.LoadInstalled(home)
			if err != nil && !errors.Is(err, pluginpkg.ErrCorruptState) {
				t.Errorf("LoadInstalled: %v, want a *StateError", err)
			}
			return err
		}},
	{"config", config.MaxFileSize,
		func(home string) string { return filepath.Join(home, "kernel.json") },
		func(_ *testing.T, _, path string) error { _, err := config.Load(path); return err }},
	{"snapshot", generation.MaxSnapshotSize,
		func(home string) string { return filepath.Join(home, "state", "current.json") },
		func(_ *testing.T, _, path string) error { _, err := generation.ReadSnapshot(path); return err }},
	{"manifest", pluginpkg.MaxManifestSize,
		func(home string) string { return filepath.Join(home, "packages", "alpha", pluginpkg.ManifestFile) },
		func(t *testing.T, home, path string) error {
			// Loading the home makes it a load warning of the package;
			// ParseFile (kernelctl validate) an error.
			inst, err := pluginpkg.LoadInstalled(home)
			if err != nil {
				t.Fatalf("LoadInstalled: %v", err)
			}
			if len(inst.Warnings) != 1 || inst.Warnings[0].Package != "alpha" || len(inst.Packages) != 0 {
				t.Errorf("LoadInstalled: packages %v, warnings %v; want one warning about alpha", inst.Packages, inst.Warnings)
			} else if w := inst.Warnings[0]; !strings.HasPrefix(w.Message, "manifest is ") || w.Err == nil {
				t.Errorf("warning = %+v, want a refused manifest", w)
			}
			_, err = pluginpkg.ParseFile(path)
			var ve *pluginpkg.ValidationError
			if !errors.As(err, &ve) {
				t.Errorf("ParseFile: %v, want a *ValidationError", err)
			}
			return err
		}},
}

// TestHomeFilesRefused turns each file the kernel and kernelctl read into
// each hostile kind of file: every read fails at once with an error naming
// the file and the fault, without reading the file into memory.
func TestHomeFilesRefused(t *testing.T) {
	for _, f := range homeFiles {
		for _, fault := range homefiletest.Faults(f.limit) {
			t.Run(f.name+"/"+fault.Name, func(t *testing.T) {
				home := t.TempDir()
				path := f.at(home)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				fault.Make(t, path)
				var err error
				alloc := allocated(func() { err = f.read(t, home, path) })
				if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), fault.Says) {
					t.Errorf("read: %v; want an error naming %s and saying %q", err, path, fault.Says)
				}
				if f.name != "manifest" && !errors.Is(err, fault.Is) {
					t.Errorf("read: %v; want it to wrap %v", err, fault.Is)
				}
				if alloc >= uint64(f.limit) {
					t.Errorf("refusing the file allocated %d bytes (limit %d)", alloc, f.limit)
				}
			})
		}
	}
}

// allocated returns the bytes the heap allocated while fn ran.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReloadRefusesHostileState turns state.json into each hostile kind of
// file under a running kernel: Reload fails naming the file, and the
// running generation keeps serving.
func TestReloadRefusesHostileState(t *testing.T) {
	for _, fault := range homefiletest.Faults(pluginpkg.MaxStateSize) {
		t.Run(fault.Name, func(t *testing.T) {
			home, _ := reloadHome(t, newSpawnLog(t))
			k := startKernel(t, testConfig(home))
			g1 := k.Current()
			state := filepath.Join(home, pluginpkg.StateFile)
			if err := os.Remove(state); err != nil {
				t.Fatal(err)
			}
			fault.Make(t, state)
			_, err := k.Reload(context.Background())
			if !errors.Is(err, fault.Is) || !strings.Contains(err.Error(), state) || !strings.Contains(err.Error(), fault.Says) {
				t.Errorf("Reload: %v; want an error naming %s, saying %q", err, state, fault.Says)
			}
			if k.Current() != g1 {
				t.Error("a failed reload replaced the current generation")
			}
			res, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
			if err != nil || string(res.Payload) != `["alpha","bravo"]` {
				t.Errorf("after the failed reload: %v, %v", res, err)
			}
		})
	}
}
