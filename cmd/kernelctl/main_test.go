package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const (
	demoHome    = "../../testdata/demo/home"
	demoConfig  = "../../testdata/demo/kernel.json"
	troubleHome = "../../testdata/homes/trouble"
)

// TestGolden runs kernelctl commands and compares stdout with golden files.
// Run `go test ./cmd/kernelctl -run TestGolden -update` to rewrite them.
func TestGolden(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
	}{
		{"list", []string{"list", "--home", demoHome}, exitOK},
		{"list-json", []string{"list", "--home", demoHome, "--json"}, exitOK},
		{"list-trouble", []string{"list", "--home", troubleHome}, exitOK},
		{"list-trouble-json", []string{"list", "--home", troubleHome, "--json"}, exitOK},
		{"resolve", []string{"resolve", "--config", demoConfig}, exitOK},
		{"resolve-json", []string{"resolve", "--config", demoConfig, "--json"}, exitOK},
		{"resolve-roots", []string{"resolve", "--config", demoConfig, "memory"}, exitOK},
		{"resolve-no-host", []string{"resolve", "--home", demoHome}, exitFailed},
		{"resolve-trouble", []string{"resolve", "--config", troubleHome + "/kernel.json"}, exitFailed},
		{"resolve-trouble-json", []string{"resolve", "--config", troubleHome + "/kernel.json", "--json"}, exitFailed},
		{"resolve-unknown-root", []string{"resolve", "--config", demoConfig, "nosuch", "kvstore-next"}, exitFailed},
		{"validate-demo", []string{"validate", "--home", demoHome}, exitOK},
		{"validate-broken", []string{"validate", "../../testdata/manifests/broken"}, exitFailed},
		{"validate-broken-json", []string{"validate", "--json", "../../testdata/manifests/broken"}, exitFailed},
		{"validate-valid", []string{"validate", "../../testdata/manifests/valid"}, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			checkGolden(t, tt.name, withoutRepo(t, stdout.Bytes()))
		})
	}
}

// withoutRepo replaces the repository's absolute path (homes are printed
// absolute) with <repo>, so that the golden files hold wherever the clone is.
func withoutRepo(t *testing.T, out []byte) []byte {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(out, []byte(root+string(filepath.Separator)), []byte("<repo>/"))
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"unknown command", []string{"frobnicate"}, `kernelctl: unknown command "frobnicate" for "kernelctl"` + "\nRun 'kernelctl --help' for usage.\n"},
		{"unknown flag", []string{"list", "--hmoe", "x"}, "kernelctl: unknown flag: --hmoe\nRun 'kernelctl list --help' for usage.\n"},
		{"bad log level", []string{"list", "--log-level", "loud"}, `kernelctl: --log-level "loud" is not a log level: want trace, debug, info, warn, error or off` + "\nRun 'kernelctl list --help' for usage.\n"},
		{"extra argument", []string{"list", "extra"}, `kernelctl: unknown command "extra" for "kernelctl list"`},
		{"enable without name", []string{"enable"}, "kernelctl: requires at least 1 arg(s), only received 0"},
		{"validate missing path", []string{"validate", "/nonexistent/plugin.json"}, "kernelctl: validate: stat /nonexistent/plugin.json: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != exitUsage {
				t.Errorf("exit code = %d, want %d", code, exitUsage)
			}
			if !strings.HasPrefix(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr = %q, want prefix %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

// TestEveryCommandHasExamples walks the command tree: every command a user
// runs shows an Example: section in its help.
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if !sub.IsAvailableCommand() || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if strings.TrimSpace(sub.Example) == "" {
				t.Errorf("%s has no Example", sub.CommandPath())
			}
			walk(sub)
		}
	}
	walk(newRootCmd(&bytes.Buffer{}, &bytes.Buffer{}))
}

// TestVersion checks both forms of `kernelctl version`: the protocol and Go
// versions this binary was built with, and the JSON document of docs/cli.md.
func TestVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"version"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit code = %d; stderr %q", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "kernelctl ") || lines[1] != "protocol "+protocol.Version || lines[2] != runtime.Version() {
		t.Errorf("version printed %q", stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"version", "--json"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("--json: exit code = %d; stderr %q", code, stderr.String())
	}
	var got map[string]string
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got["protocol"] != protocol.Version || got["go"] != runtime.Version() || got["kernelctl"] == "" {
		t.Errorf("version --json = %v", got)
	}
}

// TestLogLevel checks that EXTKERNEL_LOG is read when --log-level is unset,
// that the flag wins, and that a bad EXTKERNEL_LOG is an exit 1 naming it.
func TestLogLevel(t *testing.T) {
	t.Setenv("EXTKERNEL_LOG", "debug")
	g := &globals{}
	if err := g.checkLogLevel(); err != nil || g.level() != hclog.Debug {
		t.Errorf("EXTKERNEL_LOG=debug: %v, level %v", err, g.level())
	}
	g.logLevel = "ERROR"
	if err := g.checkLogLevel(); err != nil || g.level() != hclog.Error {
		t.Errorf("--log-level ERROR: %v, level %v", err, g.level())
	}
	t.Setenv("EXTKERNEL_LOG", "")
	if g := (&globals{}); g.level() != hclog.Warn {
		t.Errorf("default level = %v, want warn", g.level())
	}
	t.Setenv("EXTKERNEL_LOG", "chatty")
	var stdout, stderr bytes.Buffer
	code := run([]string{"list", "--home", demoHome}, &stdout, &stderr)
	if want := `kernelctl: EXTKERNEL_LOG "chatty" is not a log level: want trace, debug, info, warn, error or off` + "\n"; code != exitFailed || stderr.String() != want {
		t.Errorf("EXTKERNEL_LOG=chatty: exit %d, stderr %q; want 1, %q", code, stderr.String(), want)
	}
}

func TestConfigErrorExitsOne(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "k.json")
	if err := os.WriteFile(cfg, []byte(`{"format": 1, "pool": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"resolve", "--config", cfg}, &stdout, &stderr); code != exitFailed {
		t.Errorf("exit code = %d, want %d", code, exitFailed)
	}
	if want := "kernelctl: " + cfg + ": pool: unknown key\n"; stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
}

func TestEnableDisable(t *testing.T) {
	home := t.TempDir()
	pkg := filepath.Join(home, "packages", "themes")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(demoHome, "packages", "themes", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "plugin.json"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args    []string
		code    int
		stdout  string
		enabled string
	}{
		{[]string{"disable", "--home", home, "themes"}, exitOK, "themes: disabled\n", "no"},
		{[]string{"enable", "--home", home, "themes"}, exitOK, "themes: enabled\n", "yes"},
		{[]string{"enable", "--home", home, "nosuch"}, exitFailed, "", "yes"},
	}
	for _, s := range steps {
		var stdout, stderr bytes.Buffer
		if code := run(s.args, &stdout, &stderr); code != s.code || stdout.String() != s.stdout {
			t.Fatalf("%v: code %d stdout %q stderr %q", s.args, code, stdout.String(), stderr.String())
		}
		stdout.Reset()
		run([]string{"list", "--home", home}, &stdout, &stderr)
		if !strings.Contains(stdout.String(), "themes  1.0.0    "+s.enabled) {
			t.Fatalf("after %v, list:\n%s", s.args, stdout.String())
		}
	}
}

func TestGoldenDoctor(t *testing.T) {
	buildDemo(t)
	tests := []struct {
		name     string
		args     []string
		wantCode int
	}{
		{"doctor-demo", []string{"doctor", "--config", demoConfig}, exitOK},
		{"doctor-trouble", []string{"doctor", "--config", troubleHome + "/kernel.json"}, exitFailed},
		{"doctor-trouble-json", []string{"doctor", "--config", troubleHome + "/kernel.json", "--json"}, exitFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != tt.wantCode {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			checkGolden(t, tt.name, withoutRepo(t, stdout.Bytes()))
		})
	}
}

// TestPin pins the demo's memory package: by default its package digest
// (doctor then says nothing until a file of the package changes, and names
// it), with --executable the executable's sha256, or a given checksum; and
// unpins it.
func TestPin(t *testing.T) {
	buildDemo(t)
	home := filepath.Join(t.TempDir(), "home")
	dir := filepath.Join(home, "packages", "memory")
	copyDir(t, filepath.Join(demoHome, "packages", "memory"), dir)
	kernelctl := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := run(append(args, "--home", home), &stdout, &stderr)
		return code, stdout.String() + stderr.String()
	}
	pinned := regexp.MustCompile(`^memory: pinned to (package:[0-9a-f]{64}:[0-9a-f]{64}) \(package files and command\)\n$`)
	code, out := kernelctl("pin", "memory")
	m := pinned.FindStringSubmatch(out)
	if code != exitOK || m == nil {
		t.Fatalf("pin: %d %q", code, out)
	}
	if _, out := kernelctl("doctor"); strings.Contains(out, "pin") {
		t.Errorf("doctor after pinning the package as it is:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := kernelctl("doctor"); code != exitFailed ||
		!strings.Contains(out, "package files changed since the package was pinned (pinned "+m[1]+", now package:") {
		t.Errorf("doctor after adding a file to a pinned package: %d\n%s", code, out)
	}
	if code, out := kernelctl("pin", "--executable", "memory"); code != exitOK ||
		!regexp.MustCompile(`^memory: pinned to sha256 [0-9a-f]{64} \(executable\)\n$`).MatchString(out) {
		t.Fatalf("pin --executable: %d %q", code, out)
	}
	if _, out := kernelctl("doctor"); strings.Contains(out, "pin") {
		t.Errorf("doctor after pinning the executable:\n%s", out)
	}
	wrong := strings.Repeat("ab", 32)
	if code, out := kernelctl("pin", "memory", wrong); code != exitOK {
		t.Fatalf("pin with a checksum: %d %s", code, out)
	}
	if code, out := kernelctl("doctor"); code != exitFailed || !strings.Contains(out, "but the package is pinned to "+wrong+"; it will not start") {
		t.Errorf("doctor with a wrong pin: %d\n%s", code, out)
	}
	if code, out := kernelctl("pin", "memory", "package:"+wrong); code != exitFailed || !strings.Contains(out, "nor a package pin") {
		t.Errorf("pin with a malformed package pin: %d %q", code, out)
	}
	if code, out := kernelctl("pin", "--clear", "memory"); code != exitOK || out != "memory: unpinned\n" {
		t.Errorf("unpin: %d %q", code, out)
	}
}
