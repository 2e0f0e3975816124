package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/pluginpkg"
)

// runBinary runs kernelctl (this test binary, see TestMain) as a separate
// process with args, and returns its exit code and output.
func runBinary(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), helperEnv+"=1", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

// themesHome makes a home holding the demo's declarative package themes.
func themesHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	copyDir(t, filepath.Join(demoHome, "packages", "themes"), filepath.Join(home, "packages", "themes"))
	return home
}

// TestJSONErrorDocument: a command given --json that fails prints one JSON
// error document on stdout (its message the one on stderr), with a code
// saying what kind of failure it was; without --json stdout stays empty.
func TestJSONErrorDocument(t *testing.T) {
	home := themesHome(t)
	missing := filepath.Join(t.TempDir(), "nosuch")
	tests := []struct {
		name     string
		args     []string
		exit     int
		code     string
		fragment string // of the message
	}{
		{"no kernel runs", []string{"status", "--home", missing}, exitFailed, codeNotRunning, "no kernel is running on home " + missing},
		{"restart without a kernel", []string{"restart", "memory", "--home", missing}, exitFailed, codeNotRunning, "no admin socket at"},
		{"enable an unknown package", []string{"enable", "nosuch", "--home", home}, exitFailed, codeFailed, `package "nosuch" in ` + home + ": not installed"},
		{"pin an unknown package", []string{"pin", "nosuch", "--home", home}, exitFailed, codeFailed, `package "nosuch"`},
		{"run a missing home", []string{"run", "--once", "--home", missing}, exitFailed, codeFailed, "home " + missing + " does not exist"},
		{"unknown flag", []string{"list", "--bogus", "--home", home}, exitUsage, codeUsage, "unknown flag: --bogus"},
		{"bad argument", []string{"stop", "--timeout", "-1s", "--home", home}, exitUsage, codeUsage, "stop: --timeout -1s is not positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runBinary(t, append(tt.args, "--json")...)
			if code != tt.exit {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.exit, stderr)
			}
			var doc struct {
				Error *struct{ Code, Message string }
			}
			dec := json.NewDecoder(strings.NewReader(stdout))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&doc); err != nil || doc.Error == nil || dec.More() {
				t.Fatalf("stdout is not one JSON error document (%v):\n%s", err, stdout)
			}
			if doc.Error.Code != tt.code || !strings.Contains(doc.Error.Message, tt.fragment) {
				t.Errorf("error %+v, want code %q and a message with %q", *doc.Error, tt.code, tt.fragment)
			}
			if first, _, _ := strings.Cut(stderr, "\n"); first != "kernelctl: "+doc.Error.Message {
				t.Errorf("stderr's first line %q is not the document's message %q", first, doc.Error.Message)
			}
			if code, stdout, _ := runBinary(t, tt.args...); code != tt.exit || stdout != "" {
				t.Errorf("without --json: exit code %d, stdout %q; want %d and nothing", code, stdout, tt.exit)
			}
		})
	}
}

// TestJSONEveryCommand: enable, disable, pin and new print one JSON
// document with --json (they printed their text lines before).
func TestJSONEveryCommand(t *testing.T) {
	buildDemo(t)
	home := themesHome(t)
	copyDir(t, filepath.Join(demoHome, "packages", "memory"), filepath.Join(home, "packages", "memory"))
	dir := filepath.Join(t.TempDir(), "hello")
	tests := []struct {
		name string
		args []string
		want string // the document, with PIN standing for a digest
	}{
		{"disable", []string{"disable", "themes", "memory", "--home", home},
			`{"home": "` + home + `", "action": "disabled", "packages": ["themes", "memory"]}`},
		{"enable", []string{"enable", "memory", "--home", home},
			`{"home": "` + home + `", "action": "enabled", "packages": ["memory"]}`},
		{"pin", []string{"pin", "memory", "--home", home},
			`{"package": "memory", "pinned": true, "pin": "package:PIN:PIN", "kind": "package"}`},
		{"pin executable", []string{"pin", "memory", "--executable", "--home", home},
			`{"package": "memory", "pinned": true, "pin": "PIN", "kind": "executable"}`},
		{"pin clear", []string{"pin", "memory", "--clear", "--home", home},
			`{"package": "memory", "pinned": false}`},
		{"new", []string{"new", "hello", "--lang", "python", "--dir", dir},
			`{"name": "hello", "lang": "python", "dir": "` + dir + `", "files": ["plugin.json", "README.md", "main.py", "extkernel.py"]}`},
	}
	digest := regexp.MustCompile(`[0-9a-f]{64}`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runBinary(t, append(tt.args, "--json")...)
			if code != exitOK {
				t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
			}
			var got, want any
			if err := json.Unmarshal([]byte(digest.ReplaceAllString(stdout, "PIN")), &got); err != nil {
				t.Fatalf("stdout is no JSON document (%v):\n%s", err, stdout)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("stdout:\n%s\nwant %s", stdout, tt.want)
			}
		})
	}
}

// TestStopWithoutAdminSocket: a kernel that holds the home's run lock but
// serves no admin socket (starting, or run --once; here this test holds
// the lock) is named by stop, with its pid, rather than said not to run.
func TestStopWithoutAdminSocket(t *testing.T) {
	home := themesHome(t)
	lock, err := pluginpkg.LockRun(home)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	code, stdout, stderr := runBinary(t, "stop", "--home", home)
	want := fmt.Sprintf("kernelctl: stop: a kernel (pid %d) holds home %s but serves no admin socket (it is starting, or runs with --once): stop it with SIGTERM\n",
		os.Getpid(), home)
	if code != exitFailed || stdout != "" || stderr != want {
		t.Errorf("stop: exit %d, stdout %q, stderr %q; want 1, nothing, %q", code, stdout, stderr, want)
	}
}
