package sdktest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/pluginpkg"
)

const repo = "../.."

// binDir holds the Go plugins, built once per test binary (buildPlugins).
var (
	binDir    string
	buildOnce sync.Once
	buildErr  error
	buildOut  []byte
)

func TestMain(m *testing.M) {
	runHelper() // the test binary as a plugin (broken_test.go)
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		if binDir != "" {
			os.RemoveAll(binDir)
		}
	}))
}

// goPlugins are the Go plugins of the repository the tests run, each
// built to a binary named after its directory.
var goPlugins = []string{
	"testdata/plugins/good", "testdata/plugins/faulty",
	"testdata/demo/home/packages/audit", "testdata/demo/home/packages/kvstore",
	"testdata/demo/home/packages/kvstore-next", "testdata/demo/home/packages/memory",
	"testdata/demo/home/packages/redactor",
}

// buildPlugins builds goPlugins into binDir with one go build, once.
func buildPlugins(t *testing.T) {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "sdktest-bin-"); buildErr != nil {
			return
		}
		args := []string{"build", "-o", binDir + string(filepath.Separator)}
		for _, p := range goPlugins {
			args = append(args, "./"+p)
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = repo
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building the test plugins: %v\n%s", buildErr, buildOut)
	}
}

// pkgDir makes a package directory <tmp>/<name> from the manifest and
// files of src (a directory of the repository): files are copied, and
// each of links (a path in the package, such as "bin/memory") is a copy
// of a built binary of binDir (link's value).
func pkgDir(t *testing.T, name, src string, files []string, links map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	for _, f := range append([]string{pluginpkg.ManifestFile}, files...) {
		copyFile(t, filepath.Join(repo, src, f), filepath.Join(dir, f))
	}
	for dst, bin := range links {
		buildPlugins(t)
		copyFile(t, filepath.Join(binDir, bin), filepath.Join(dir, dst))
	}
	return dir
}

// copyFile copies src to dst, creating dst's directory, keeping the mode.
// A hard link is tried first.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Link(src, dst) == nil {
		return
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// needInterpreter skips the test when the named interpreter is absent
// (fails it when proctest.RequireInterpretersEnv is 1).
func needInterpreter(t *testing.T, name string) {
	t.Helper()
	proctest.Interpreter(t, name)
}

// noChildren fails the test if a process the test started is still
// there (the host's reaper aside).
func noChildren(t *testing.T) {
	t.Helper()
	pids, ok := proctest.Children(os.Getpid())
	if !ok {
		return // no /proc: nothing to check
	}
	if len(pids) > 0 {
		t.Errorf("child processes left behind: %v", pids)
	}
}

// statuses maps each case of rep to its status.
func statuses(rep Report) map[string]Status {
	m := make(map[string]Status, len(rep.Cases))
	for _, c := range rep.Cases {
		m[c.Name] = c.Status
	}
	return m
}

// writeFile writes a file, creating its directory.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
