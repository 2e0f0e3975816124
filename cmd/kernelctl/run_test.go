package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/generation"
)

// waitLimit bounds every wait of these tests: a hang fails instead of
// blocking the run. Nothing is asserted about how long things take.
const waitLimit = 60 * time.Second

var (
	durationRE = regexp.MustCompile(`in \d+(\.\d+)?(ns|µs|ms|s)\b`)
	elapsedRE  = regexp.MustCompile(`"elapsed": "[^"]*"`)
)

// normalizeRun makes `run` output comparable: durations become <dur>, and
// the progress lines (everything before the first blank line), which
// interleave across plugins started in parallel, are sorted by plugin,
// stably, so that each plugin's own sequence is kept.
func normalizeRun(out string) string {
	out = durationRE.ReplaceAllString(out, "in <dur>")
	head, tail, _ := strings.Cut(out, "\n\n")
	lines := strings.Split(head, "\n")
	plugin := func(l string) string { f := strings.Fields(l); return strings.TrimSuffix(f[min(1, len(f)-1)], ":") }
	slices.SortStableFunc(lines, func(a, b string) int { return strings.Compare(plugin(a), plugin(b)) })
	return strings.Join(lines, "\n") + "\n\n" + tail
}

// TestGoldenRun runs `kernelctl run --once` on a fresh copy of the demo
// home (a run records its generation there, and the next run numbers on).
func TestGoldenRun(t *testing.T) {
	buildDemo(t)
	tests := []struct {
		name      string
		args      []string
		normalize func(string) string
	}{
		{"run-once", []string{"run", "--once"}, normalizeRun},
		{"run-once-json", []string{"run", "--once", "--json"},
			func(s string) string {
				s = hashRE.ReplaceAllString(s, `"<hash>"`) // the demo's binaries differ per toolchain
				return elapsedRE.ReplaceAllString(s, `"elapsed": "<dur>"`)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, cfg := demoCopy(t)
			var stdout, stderr bytes.Buffer
			if code := run(append(tt.args, "--config", cfg), &stdout, &stderr); code != exitOK {
				t.Fatalf("exit code = %d, want 0; stderr:\n%s", code, stderr.String())
			}
			out := strings.ReplaceAll(stdout.String(), dir+string(filepath.Separator), "<dir>/")
			checkGolden(t, tt.name, []byte(tt.normalize(out)))
			noChildren(t)
		})
	}
}

// demoCopy copies the demo config and home, without its recorded state,
// into a temporary directory: it returns the directory and the config.
func demoCopy(t *testing.T) (dir, cfg string) {
	t.Helper()
	dir = t.TempDir()
	copyDir(t, demoHome, filepath.Join(dir, "home"))
	if err := os.RemoveAll(filepath.Join(dir, "home", "state")); err != nil {
		t.Fatal(err)
	}
	cfg = filepath.Join(dir, "kernel.json")
	copyFile(t, demoConfig, cfg)
	return dir, cfg
}

// TestRunNumbersOn runs `run --once` twice on one home: the second run's
// generation is 2, and generation 1's snapshot is kept as it was.
func TestRunNumbersOn(t *testing.T) {
	buildDemo(t)
	dir, cfg := demoCopy(t)
	snapshots := filepath.Join(dir, "home", "state", "snapshots")
	var first []byte
	for _, want := range []uint64{1, 2} {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"run", "--config", cfg, "--once"}, &stdout, &stderr); code != exitOK {
			t.Fatalf("run %d: exit code = %d, want 0; stderr:\n%s", want, code, stderr.String())
		}
		wantLines(t, "stdout", stdout.String(), fmt.Sprintf("generation %d: 5 members", want))
		s, err := generation.ReadSnapshot(filepath.Join(snapshots, fmt.Sprintf("%d.json", want)))
		if err != nil || s.Generation != want {
			t.Fatalf("run %d: snapshot %v, %v; want generation %d", want, s, err, want)
		}
		one, err := os.ReadFile(filepath.Join(snapshots, "1.json"))
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = one
		} else if !bytes.Equal(one, first) {
			t.Errorf("run %d rewrote 1.json", want)
		}
	}
	entries, err := os.ReadDir(snapshots)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"1.json", "2.json"}; !slices.Equal(names, want) {
		t.Errorf("snapshots = %v, want %v", names, want)
	}
	noChildren(t)
}

func TestRunJSONNeedsOnce(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"run", "--config", demoConfig, "--json"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("exit code = %d, want %d", code, exitUsage)
	}
	if want := "kernelctl: run: --json needs --once\n"; !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr = %q, want prefix %q", stderr.String(), want)
	}
}

// TestRunRequiredFailure starts homes whose required plugins fail: run
// exits 1, prints every problem, says nothing about stopping (nothing ran),
// and leaves no process behind.
func TestRunRequiredFailure(t *testing.T) {
	buildDemo(t)
	t.Run("unresolvable", func(t *testing.T) {
		// No host capabilities and no kvstore: both required packages have
		// an unsatisfiable requirement, found before anything starts.
		home := t.TempDir()
		writeManifest(t, home, "redactor", nil)
		writeManifest(t, home, "memory", func(m map[string]any) { runtimeOf(m)["required"] = true })
		var stdout, stderr bytes.Buffer
		if code := run([]string{"run", "--home", home, "--once"}, &stdout, &stderr); code != exitFailed {
			t.Errorf("exit code = %d, want %d", code, exitFailed)
		}
		if stdout.Len() > 0 {
			t.Errorf("stdout = %q, want nothing: no plugin was started", stdout.String())
		}
		checkGolden(t, "run-unresolvable-stderr", stderr.Bytes())
		noChildren(t)
	})
	t.Run("handshake", func(t *testing.T) {
		// redactor (required) exits during its handshake while kvstore and
		// audit start next to it: they are stopped again.
		home := t.TempDir()
		for _, name := range []string{"kvstore", "audit"} {
			copyDir(t, filepath.Join(demoHome, "packages", name), filepath.Join(home, "packages", name))
		}
		writeManifest(t, home, "redactor", func(m map[string]any) {
			rt := runtimeOf(m)
			rt["command"] = "sh"
			rt["args"] = []string{"-c", "read -r line; echo 'redactor: no key configured' >&2; exit 3"}
		})
		cfg := filepath.Join(home, "kernel.json")
		writeFile(t, cfg, `{"format": 1, "home": ".", "capabilities": [{"capability": "host.log", "version": "1.0.0"}]}`)
		var stdout, stderr bytes.Buffer
		if code := run([]string{"run", "--config", cfg, "--once"}, &stdout, &stderr); code != exitFailed {
			t.Errorf("exit code = %d, want %d", code, exitFailed)
		}
		noChildren(t)
		wantLines(t, "stdout", stdout.String(), "starting redactor\n", "failed redactor: ", "redactor: no key configured")
		wantLines(t, "stderr", stderr.String(), "kernelctl: generation 1: 1 problem:\n", `required plugin "redactor" failed: `,
			"redactor: no key configured")
		if strings.Contains(stdout.String(), "stopped") {
			t.Errorf("stdout says stopped after a failed start:\n%s", stdout.String())
		}
	})
}

func wantLines(t *testing.T, name, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", name, w, got)
		}
	}
}

// outBuffer is a writer safe for concurrent use whose content can be
// waited for.
type outBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // capacity 1: a write happened
}

func newOutBuffer() *outBuffer { return &outBuffer{changed: make(chan struct{}, 1)} }

func (b *outBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	n, err := b.buf.Write(p)
	b.mu.Unlock()
	select {
	case b.changed <- struct{}{}:
	default:
	}
	return n, err
}

func (b *outBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor blocks until the output contains s, failing after waitLimit.
func (b *outBuffer) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(waitLimit)
	for !strings.Contains(b.String(), s) {
		select {
		case <-b.changed:
		case <-deadline:
			t.Fatalf("output never contained %q:\n%s", s, b.String())
		}
	}
}

// pidOf returns the pid among pids whose command is the named demo plugin.
func pidOf(t *testing.T, pids []int, name string) int {
	t.Helper()
	for _, pid := range pids {
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && filepath.Base(string(bytes.TrimRight(cmdline, "\x00"))) == name {
			return pid
		}
	}
	t.Fatalf("no %s process among %v", name, pids)
	return 0
}

// writeManifest writes the demo package's manifest into home, edited.
func writeManifest(t *testing.T, home, name string, edit func(map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(demoHome, "packages", name, "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	if data, err = json.MarshalIndent(m, "", "  "); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, "packages", name, "plugin.json"), string(data))
}

func runtimeOf(m map[string]any) map[string]any { return m["runtime"].(map[string]any) }

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyDir copies a package directory, keeping file modes.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

// startKernelctl runs kernelctl with args in a subprocess (this test binary,
// see TestMain) and waits until `run` is serving. exited receives the
// process's end; the cleanup kills it if the test did not stop it.
func startKernelctl(t *testing.T, args ...string) (cmd *exec.Cmd, stdout, stderr *outBuffer, exited chan error) {
	t.Helper()
	cmd = exec.Command(os.Args[0], args...)
	// A race-enabled binary sleeps 1s at exit for late reports.
	cmd.Env = append(os.Environ(), helperEnv+"=1", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	stdout, stderr = newOutBuffer(), newOutBuffer()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	stdout.waitFor(t, "running; reload with SIGHUP")
	return cmd, stdout, stderr, exited
}
