package corpus

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk/sdktest"
)

// root is the module's root, from this package's directory.
var root = filepath.Join("..", "..")

// releasedVersions are the protocol versions released so far: each has a
// corpus directory. A new minor adds its own.
var releasedVersions = []string{"1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0"}

// minPerVersion is how many plugins each version's corpus has at least.
const minPerVersion = 12

// corpusKinds are the prefixes of a corpus plugin's directory name, each
// of which every version has at least one of: the SDKs of the time, and
// plugins with no SDK.
var corpusKinds = []string{"python-sdk-", "node-sdk-", "raw-python-", "raw-node-", "raw-shell", "go-"}

// TestCorpus copies every plugin of testdata/corpus/<version>/ into a
// temporary directory (the corpus is never written to), builds the Go
// ones there, and runs the conformance suite on each against the current
// kernel: every case must pass (no warning, no skip), and the handshake
// must show the plugin answering exactly its directory's version. A
// plugin with warnings only (all about time) is run once more, alone,
// and judged by that run.
func TestCorpus(t *testing.T) {
	proctest.Interpreter(t, "python3")
	proctest.Interpreter(t, "node")
	proctest.Interpreter(t, "sh")
	work := t.TempDir()
	var dirs []string // version/name
	for _, v := range releasedVersions {
		names := corpusPlugins(t, v)
		for _, name := range names {
			copyDir(t, filepath.Join(root, "testdata", "corpus", v, name), filepath.Join(work, v, name))
			if strings.Contains(name, "-sdk-") { // the version's SDK file, kept once in _sdk
				copyDir(t, filepath.Join(root, "testdata", "corpus", v, "_sdk"), filepath.Join(work, v, name))
			}
			dirs = append(dirs, v+"/"+name)
		}
		buildGo(t, v, names, filepath.Join(work, v))
	}
	reports := runAll(t, work, dirs)
	for _, d := range dirs {
		t.Run(d, func(t *testing.T) {
			r := reports[d]
			if onlyWarnings(r) {
				// A warning is about time (a call or its cancel answered
				// late), which a loaded machine running six plugins at
				// once can cause: run the plugin again, alone.
				t.Logf("warnings, run again alone: %s", strings.Join(judge(d, r), "; "))
				r = runAll(t, work, []string{d})[d]
			}
			for _, p := range judge(d, r) {
				t.Error(p)
			}
		})
	}
}

// TestCorpusVersions holds that the corpus has a directory for each
// released protocol version, the current one (protocol.Version) included,
// and nothing else but current: a new protocol minor adds its directory
// and its entry in releasedVersions.
func TestCorpusVersions(t *testing.T) {
	if last := releasedVersions[len(releasedVersions)-1]; last != protocol.Version {
		t.Errorf("the last released version is %s, the host speaks %s: add testdata/corpus/%s", last, protocol.Version, protocol.Version)
	}
	entries, err := os.ReadDir(filepath.Join(root, "testdata", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "current" {
			dirs = append(dirs, e.Name())
		}
	}
	if !slices.Equal(dirs, releasedVersions) {
		t.Errorf("corpus directories %q, released versions %q", dirs, releasedVersions)
	}
}

// onlyWarnings reports whether r's cases are all passed or warned, with
// at least one warning.
func onlyWarnings(r result) bool {
	warned := false
	for _, c := range r.rep.Cases {
		switch c.Status {
		case sdktest.Pass:
		case sdktest.Warn:
			warned = true
		default:
			return false
		}
	}
	return r.err == nil && warned
}

// judge returns what keeps the plugin of dir (version/name) from passing:
// an error of the suite, a case that did not pass, a handshake not
// answered with exactly the version.
func judge(dir string, r result) []string {
	if r.err != nil {
		return []string{"conformance: " + r.err.Error()}
	}
	var problems []string
	v, _, _ := strings.Cut(dir, "/")
	for _, c := range r.rep.Cases {
		if c.Status != sdktest.Pass {
			problems = append(problems, fmt.Sprintf("%s: %s: %s", c.Name, strings.ToUpper(string(c.Status)), c.Reason))
		}
		if c.Name == "handshake" && !strings.Contains(c.Reason, "protocol "+v) {
			problems = append(problems, fmt.Sprintf("handshake: %s; want the plugin to answer protocol %s", c.Reason, v))
		}
		if c.Name == "handshake" && wire.Announces(v) && !strings.Contains(c.Reason, ", announcing ") {
			problems = append(problems, fmt.Sprintf("handshake: %s; want the plugin to announce its features (protocol %s)", c.Reason, v))
		}
	}
	if len(r.rep.Cases) == 0 {
		problems = append(problems, "no case ran")
	}
	return problems
}

// TestCorpusCatchesChangedMeaning holds that the corpus test fails when a
// plugin and the host no longer agree on what something means: copies of
// a 1.0.0 corpus plugin changed as a new meaning would change them (an
// interceptor decision spelled otherwise; another protocol major; the
// version of the directory not the one answered; a 1.4 plugin that no
// longer announces its features) are judged failing.
func TestCorpusCatchesChangedMeaning(t *testing.T) {
	proctest.Interpreter(t, "python3")
	tests := []struct{ name, version, old, new string }{
		{"decision renamed", "1.0.0", `{"decision": "continue"}`, `{"decision": "proceed"}`},
		{"another major", "1.0.0", `VERSION = "1.0.0"`, `VERSION = "2.0.0"`},
		{"another minor", "1.0.0", `VERSION = "1.0.0"`, `VERSION = "1.1.0"`},
		{"progress not announced", "1.4.0", `"features": ["progress"]`, `"features": []`},
	}
	work := t.TempDir()
	var dirs []string
	for _, tt := range tests {
		src := tt.version + "/raw-python-interceptor"
		if tt.version == "1.4.0" {
			src = tt.version + "/raw-python-provider"
		}
		dir := filepath.Join(work, tt.version, tt.name)
		copyDir(t, filepath.Join(root, "testdata", "corpus", filepath.FromSlash(src)), dir)
		script := filepath.Join(dir, "plugin.py")
		data, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), tt.old) {
			t.Fatalf("%s has no %s", src, tt.old)
		}
		if err := os.WriteFile(script, []byte(strings.Replace(string(data), tt.old, tt.new, 1)), 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, tt.version+"/"+tt.name)
	}
	reports := runAll(t, work, dirs)
	for _, d := range dirs {
		if p := judge(d, reports[d]); len(p) == 0 {
			t.Errorf("%s: judged passing", d)
		} else {
			t.Logf("%s: %s", d, strings.Join(p, "; "))
		}
	}
}

// corpusPlugins lists the plugin directories of one version's corpus,
// sorted, and checks there are enough of every kind.
func corpusPlugins(t *testing.T, version string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "testdata", "corpus", version))
	if err != nil {
		t.Fatalf("corpus of protocol %s: %v", version, err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), "_") { // _sdk holds the version's SDK files
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	if len(names) < minPerVersion {
		t.Errorf("corpus of protocol %s: %d plugins, want at least %d", version, len(names), minPerVersion)
	}
	for _, kind := range corpusKinds {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, kind) }) {
			t.Errorf("corpus of protocol %s: no plugin %s*", version, kind)
		}
	}
	return names
}

// copyDir copies the regular files of the directory src to dst, keeping
// their modes.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// buildGo builds the version's Go plugins (the directories named go-*)
// in one go build, each into its copy's "plugin", the command its
// manifest names.
func buildGo(t *testing.T, version string, names []string, work string) {
	t.Helper()
	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	var goNames []string
	for _, n := range names {
		if strings.HasPrefix(n, "go-") {
			goNames = append(goNames, n)
			args = append(args, "./"+filepath.ToSlash(filepath.Join("testdata", "corpus", version, n)))
		}
	}
	if len(goNames) == 0 {
		return
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the Go plugins of protocol %s: %v\n%s", version, err, out)
	}
	for _, n := range goNames {
		if err := os.Rename(filepath.Join(bin, n), filepath.Join(work, n, "plugin")); err != nil {
			t.Fatal(err)
		}
	}
}

type result struct {
	rep sdktest.Report
	err error
}

// runAll runs the conformance suite on every plugin, a few at once: the
// plugins mostly wait, and one at a time would take minutes.
func runAll(t *testing.T, work string, dirs []string) map[string]result {
	t.Helper()
	const parallel = 6
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, parallel)
		out = make(map[string]result, len(dirs))
	)
	for _, d := range dirs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rep, err := sdktest.Run(ctx, filepath.Join(work, filepath.FromSlash(d)), sdktest.Options{})
			if err != nil {
				err = fmt.Errorf("%s: %w", d, err)
			}
			mu.Lock()
			out[d] = result{rep, err}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}
