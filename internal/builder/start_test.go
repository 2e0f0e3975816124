//go:build unix

package builder

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/plugintest"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// inputsOf loads home as a build's inputs.
func inputsOf(t *testing.T, home string) generation.Inputs {
	t.Helper()
	inst, err := pluginpkg.LoadInstalled(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(inst.Warnings) > 0 {
		t.Fatalf("home warnings: %v", inst.Warnings)
	}
	return generation.Inputs{Number: 1, Installed: inst, Spec: contribution.HostSpec{Points: []contribution.Point{"tool.before"},
		Slots: []contribution.Slot{"context.compactor"}}}
}

// TestKernelRangeRefused holds that a member whose manifest's kernel range
// rejects this host's protocol is refused before anything is spawned: a
// StartError in phase "version" wrapping the *protocol.VersionError,
// reported starting then failed. A required one fails the build, and
// nothing else is launched (the batch is not started: the build fails
// anyway); an optional one is a failed member.
func TestKernelRangeRefused(t *testing.T) {
	const want = `plugin "old": version: plugin wants protocol ^2.0 but this host speaks ` + protocol.Version +
		`: upgrade the host`
	for _, required := range []bool{true, false} {
		t.Run(map[bool]string{true: "required", false: "optional"}[required], func(t *testing.T) {
			home := t.TempDir()
			addPackage(t, home, "old", `{"format": 1, "name": "old", "version": "1.0.0", "kernel": "^2.0",
  "runtime": {"command": "./good", "required": `+map[bool]string{true: "true", false: "false"}[required]+`}}`)
			if required {
				addPackage(t, home, "other", plugintest.GoodManifest("other", false)) // would be launched if the batch started
			}
			var events []string
			o := Options{Client: testOptions(), OnEvent: func(e Event) {
				msg := ""
				if e.Err != nil {
					msg = ": " + e.Err.Error()
				}
				events = append(events, e.Plugin+" "+string(e.State)+msg)
			}}
			r, err := Build(context.Background(), inputsOf(t, home), o)
			if wantEvents := []string{"old starting", "old failed: " + want}; !reflect.DeepEqual(events, wantEvents) {
				t.Errorf("events = %q, want %q", events, wantEvents)
			}
			if !required {
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				defer r.Close(context.Background())
				if m := r.Generation().Member("old"); m.Status != generation.StatusFailed || m.Reason != want {
					t.Errorf("member = %s %q, want failed with %q", m.Status, m.Reason, want)
				}
				return
			}
			var be *generation.BuildError
			var se *sidecar.StartError
			var ve *protocol.VersionError
			if !errors.As(err, &be) || !errors.As(err, &se) || !errors.As(err, &ve) {
				t.Fatalf("Build = %v, want a *BuildError wrapping a *sidecar.StartError and a *protocol.VersionError", err)
			}
			if se.Phase != "version" || !strings.Contains(ve.Error(), "plugin wants protocol ^2.0 but") || ve.Upgrade != "host" {
				t.Errorf("StartError phase %q, VersionError %+v; want version, ^2.0, upgrade the host", se.Phase, ve)
			}
			if wantProblems := []string{`required plugin "old" failed: ` + want}; !reflect.DeepEqual(be.Problems, wantProblems) {
				t.Errorf("problems = %q, want %q", be.Problems, wantProblems)
			}
			assertNoProcesses(t)
		})
	}
}

// TestBuildUnavailable holds that an expected package that is not
// installed fails the build before anything starts, with the
// *generation.UnavailableError a plan lists too.
func TestBuildUnavailable(t *testing.T) {
	home := t.TempDir()
	addPackage(t, home, "audit", plugintest.GoodManifest("audit", false))
	in := inputsOf(t, home)
	in.Expect = []generation.Expected{{Name: "missing", Why: "why"}}
	var events []Event
	_, err := Build(context.Background(), in, Options{Client: testOptions(), OnEvent: func(e Event) { events = append(events, e) }})
	var be *generation.BuildError
	var ue *generation.UnavailableError
	want := []string{`required package "missing": packages/missing: not installed (the package directory is missing); why`}
	if !errors.As(err, &be) || !errors.As(err, &ue) || !reflect.DeepEqual(be.Problems, want) {
		t.Errorf("Build = %v, want a *BuildError with problems %q", err, want)
	}
	if len(events) != 0 {
		t.Errorf("events %v: something was started", events)
	}
}

// TestHostKinds: the kinds a handshake may declare contributions of are the
// host's own, sorted, without the built-in ones; none for a host that
// declares only those.
func TestHostKinds(t *testing.T) {
	kinds := append(contribution.DefaultKinds(), contribution.KindSpec{Kind: "tool", Policy: contribution.Unique},
		contribution.KindSpec{Kind: "hook", Policy: contribution.Ordered, Target: contribution.TargetPoint})
	if got := hostKinds(kinds); !slices.Equal(got, []contribution.Kind{"hook", "tool"}) {
		t.Errorf("hostKinds = %q, want hook, tool", got)
	}
	if got := hostKinds(contribution.DefaultKinds()); got != nil {
		t.Errorf("with the built-in kinds only, hostKinds = %q, want none", got)
	}
}

// TestFingerprintBeforeStart: a member's fingerprint is taken before its
// process is spawned, so a plugin that writes into its own package as it
// starts leaves a generation recording the files it was started from, and
// the next plan sees the change (before, the fingerprint was taken after
// the start: the write was recorded as what runs, and a reload kept the
// process).
func TestFingerprintBeforeStart(t *testing.T) {
	home := t.TempDir()
	addPackage(t, home, "writer", strings.Replace(plugintest.GoodManifest("writer", true), "./good", "./start.sh", 1))
	dir := filepath.Join(home, pluginpkg.PackagesDir, "writer")
	script := "#!/bin/sh\nd=$(dirname \"$0\")\necho started >> \"$d/written\"\nexec \"$d/good\"\n"
	if err := os.WriteFile(filepath.Join(dir, "start.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	in := inputsOf(t, home)
	r, err := Build(context.Background(), in, Options{Client: testOptions()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(context.Background())
	if _, err := os.Stat(filepath.Join(dir, "written")); err != nil {
		t.Fatalf("the plugin did not write as it started: %v", err)
	}
	snap := r.Generation().Snapshot()
	fp := snap.Packages[0].Fingerprint
	if _, ok := fp.FileDigests["written"]; ok || fp.FileDigests["start.sh"] == "" {
		t.Fatalf("the generation records %v: want the files before the start (start.sh, no written)", slices.Sorted(maps.Keys(fp.FileDigests)))
	}
	plan, err := generation.NewPlan(snap, inputsOf(t, home))
	if err != nil {
		t.Fatal(err)
	}
	if c := plan.Packages[0]; c.Name != "writer" || c.Class != generation.ClassReloaded {
		t.Errorf("the next plan: %s %s %v, want writer reloaded (its files changed)", c.Name, c.Class, c.Reasons)
	}
}
