//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/extkernel/extkernel/pluginpkg"
)

// killAtEnv, set in a kernelctl process run by TestInstallKilledBetweenSteps,
// names the install step at which it SIGKILLs itself.
const killAtEnv = "KERNELCTL_TEST_KILL_AT"

func init() {
	if step := os.Getenv(killAtEnv); step != "" {
		installStep = func(s pluginpkg.InstallStep) {
			if string(s) == step {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the signal is on its way
			}
		}
	}
}

// TestInstallKilledBetweenSteps runs `kernelctl install` and `kernelctl
// upgrade` as processes that SIGKILL themselves after extraction, before
// the rename and after the rename (before the state write): the home then
// lists cleanly with the old version or the new one, whole, and the same
// command run again succeeds and leaves no staging directory.
func TestInstallKilledBetweenSteps(t *testing.T) {
	src := t.TempDir()
	v1 := writeTarGz(t, filepath.Join(src, "kv-1.0.0.tar.gz"), archiveEntry{name: "plugin.json", body: declarative("kv", "1.0.0", kvProvides)})
	v2 := writeZip(t, filepath.Join(src, "kv-2.0.0.zip"),
		archiveEntry{name: "plugin.json", body: declarative("kv", "2.0.0", kvProvides)},
		archiveEntry{name: "lib/a.txt", body: "a"}, archiveEntry{name: "lib/b.txt", body: "b"})
	tests := []struct {
		verb  string
		step  pluginpkg.InstallStep
		after string // the version listed after the kill; "" none
		retry int    // the retry's exit code
	}{
		{"install", pluginpkg.StepExtracted, "", exitOK},
		{"install", pluginpkg.StepSynced, "", exitOK},
		{"install", pluginpkg.StepPlaced, "2.0.0", exitOK},
		{"upgrade", pluginpkg.StepExtracted, "1.0.0", exitOK},
		{"upgrade", pluginpkg.StepSynced, "1.0.0", exitOK},
		{"upgrade", pluginpkg.StepPlaced, "2.0.0", exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.verb+" killed at "+string(tt.step), func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			if tt.verb == "upgrade" {
				if code, _, stderr := kctl("install", v1, "--home", home); code != exitOK {
					t.Fatal(stderr)
				}
			}
			cmd := exec.Command(os.Args[0], tt.verb, v2, "--home", home)
			cmd.Env = append(os.Environ(), helperEnv+"=1", killAtEnv+"="+string(tt.step), "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("kernelctl %s was not killed: %v\n%s", tt.verb, err, out)
			}
			if _, err := os.Lstat(filepath.Join(home, "packages", pluginpkg.StagingDir)); err != nil {
				t.Errorf("no staging directory left by the killed process: %v", err)
			}
			inst, err := pluginpkg.LoadInstalled(home)
			if err != nil || len(inst.Warnings) != 0 {
				t.Fatalf("the home does not load cleanly: %v %v", inst, err)
			}
			var listed string
			for _, p := range inst.Packages {
				listed = p.Manifest.Version.String()
				if d, err := p.FilesDigest(); err != nil || len(d.Files) != map[string]int{"1.0.0": 1, "2.0.0": 3}[listed] {
					t.Errorf("kv %s is not whole: %v %v", listed, d, err)
				}
			}
			if listed != tt.after {
				t.Errorf("after the kill kv is %q, want %q", listed, tt.after)
			}
			if code, stdout, stderr := kctl("list", "--home", home); code != exitOK || strings.Contains(stdout, "warning") {
				t.Errorf("list: exit %d\n%s%s", code, stdout, stderr)
			}
			code, _, stderr := kctl(tt.verb, v2, "--home", home)
			if code != tt.retry {
				t.Fatalf("retry: exit %d, want %d: %s", code, tt.retry, stderr)
			}
			inst, err = pluginpkg.LoadInstalled(home)
			if err != nil || len(inst.Packages) != 1 || inst.Packages[0].Manifest.Version.String() != "2.0.0" {
				t.Fatalf("after the retry: %v %v", inst, err)
			}
			if d, _ := inst.Packages[0].FilesDigest(); d == nil || inst.Packages[0].Digest != d.Sum {
				t.Errorf("after the retry the recorded digest is %q, the files' %v", inst.Packages[0].Digest, d)
			}
			if _, err := os.Lstat(filepath.Join(home, "packages", pluginpkg.StagingDir)); !os.IsNotExist(err) {
				t.Errorf("the staging directory is left after the retry: %v", err)
			}
		})
	}
}
