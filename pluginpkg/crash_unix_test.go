//go:build unix

package pluginpkg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// Environment of TestInstallKillHelper.
const (
	killHomeEnv     = "PLUGINPKG_KILL_HOME"
	killSrcEnv      = "PLUGINPKG_KILL_SRC"
	killStepEnv     = "PLUGINPKG_KILL_STEP"
	killFallbackEnv = "PLUGINPKG_KILL_FALLBACK"
)

// TestInstallKilled SIGKILLs a process installing or upgrading a package at
// each step: the home then loads, with the old version or the new one
// whole (or, between the fallback's renames, none), and running the same
// install again completes it.
func TestInstallKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns helper processes")
	}
	type outcome string // what packages/demo holds after the kill
	const absent, old, new outcome = "absent", "1.0.0", "2.0.0"
	tests := []struct {
		upgrade, fallback bool
		step              InstallStep
		want              outcome
	}{
		{false, false, StepExtracted, absent},
		{false, false, StepSynced, absent},
		{false, false, StepPlaced, new},
		{true, false, StepExtracted, old},
		{true, false, StepSynced, old},
		{true, false, StepPlaced, new},
		{true, true, StepSynced, old},
		{true, true, StepMovedAside, absent},
		{true, true, StepPlaced, new},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s at %s", map[bool]string{false: "install", true: "upgrade"}[tt.upgrade], tt.step)
		if tt.fallback {
			name += " with renames"
		}
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			v1 := writeArchive(t, "tar.gz", pkgEntries("demo", "1.0.0"))
			v2 := writeArchive(t, "zip", pkgEntries("demo", "2.0.0"))
			if tt.upgrade {
				if _, err := InstallSource(home, v1, InstallOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestInstallKillHelper$")
			cmd.Env = append(os.Environ(), killHomeEnv+"="+home, killSrcEnv+"="+v2, killStepEnv+"="+string(tt.step))
			if tt.fallback {
				cmd.Env = append(cmd.Env, killFallbackEnv+"=1")
			}
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("helper was not killed: %v\n%s", err, out)
			}
			inst, err := LoadInstalled(home)
			if err != nil {
				t.Fatal(err)
			}
			got := absent
			if len(inst.Packages) == 1 {
				got = outcome(inst.Packages[0].Manifest.Version.String())
				files := snapshotFiles(t, filepath.Join(home, "packages", "demo"))
				want := snapshotFiles(t, writeDir(t, pkgEntries("demo", string(got))))
				if fmt.Sprint(files) != fmt.Sprint(want) {
					t.Errorf("packages/demo is not version %s whole:\n%v\nwant\n%v", got, files, want)
				}
			}
			if got != tt.want || len(inst.Packages) > 1 || len(inst.Warnings) > 0 && !(got == absent && tt.upgrade) {
				t.Errorf("after the kill: %s (%v); want %s", got, summary(inst), tt.want)
			}
			res, err := InstallSource(home, v2, InstallOptions{Upgrade: tt.upgrade})
			if err != nil {
				t.Fatalf("retry: %v", err)
			}
			if res.Package.Manifest.Version.String() != "2.0.0" || stateOf(t, home, "demo").Digest != res.Digest {
				t.Errorf("retry: %+v, state %+v", res, stateOf(t, home, "demo"))
			}
			if _, err := os.Lstat(filepath.Join(home, "packages", StagingDir)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("packages/.staging left after the retry: %v", err)
			}
			if tt.upgrade && digestOf(t, previousPath(home, "demo")) != digestOf(t, writeDir(t, pkgEntries("demo", "1.0.0"))) {
				t.Errorf("the retry kept no previous version 1.0.0")
			}
		})
	}
}

// TestInstallKillHelper is the body of TestInstallKilled's processes: it
// installs and SIGKILLs itself at the step named; it does nothing in a
// normal test run.
func TestInstallKillHelper(t *testing.T) {
	home := os.Getenv(killHomeEnv)
	if home == "" {
		t.Skip("helper process only")
	}
	if os.Getenv(killFallbackEnv) == "1" {
		exchange = func(string, string) error { return errNoExchange }
	}
	step := InstallStep(os.Getenv(killStepEnv))
	_, err := InstallSource(home, os.Getenv(killSrcEnv), InstallOptions{Upgrade: true, OnStep: func(s InstallStep) {
		if s == step {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}})
	fmt.Fprintf(os.Stderr, "not killed at %s: %v\n", step, err)
	os.Exit(3)
}
