package main

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNoKernelRunning: every command that asks a running kernel says so
// when none runs on the home, and exits 1; with --json, stdout holds the
// error document.
func TestNoKernelRunning(t *testing.T) {
	home := t.TempDir()
	want := "kernelctl: no kernel is running on home " + home + " (no admin socket at " +
		filepath.Join(home, "run", "admin.sock") + ")\n"
	for _, args := range [][]string{
		{"status"}, {"status", "--json"}, {"stop"}, {"restart", "memory"}, {"reload"}, {"logs"}, {"logs", "audit", "-f"},
		{"events"}, {"events", "-f"}, {"call", "provider", "plugin/kvstore/get", `"k"`},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(append(args, "--home", home), &stdout, &stderr); code != exitFailed {
				t.Errorf("exit code = %d, want %d", code, exitFailed)
			}
			if stderr.String() != want {
				t.Errorf("stderr = %q, want %q", stderr.String(), want)
			}
			switch {
			case slices.Contains(args, "--json"):
				if !strings.Contains(stdout.String(), `"code": "not_running"`) {
					t.Errorf("stdout = %q, want the JSON error document, not_running", stdout.String())
				}
			case stdout.Len() != 0:
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

// TestCompletion: package names complete for the commands that take them,
// in the argument positions that are package names.
func TestCompletion(t *testing.T) {
	all := "audit\nkvstore\nkvstore-next\nmemory\nredactor\nthemes\n:4\n"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"enable", ""}, all},
		{[]string{"disable", "audit", "k"}, "kvstore\nkvstore-next\n:4\n"},
		{[]string{"pin", "me"}, "memory\n:4\n"},
		{[]string{"pin", "memory", ""}, ":4\n"},
		{[]string{"restart", "re"}, "redactor\n:4\n"},
		{[]string{"logs", ""}, all},
		{[]string{"call", ""}, "provider\naction\nstrategy\nintercept\n:4\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"__complete", "--home", demoHome}, tt.args...)
			if code := run(args, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit code = %d; stderr:\n%s", code, stderr.String())
			}
			if stdout.String() != tt.want {
				t.Errorf("completions = %q, want %q", stdout.String(), tt.want)
			}
		})
	}
}
