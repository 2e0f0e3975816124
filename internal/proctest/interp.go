package proctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RequireInterpretersEnv names the environment variable that, set to 1,
// makes a missing interpreter fail a cross-language test instead of
// skipping it, so that CI (which has python3 and node) cannot skip such
// tests unnoticed. .ci/run sets it.
const RequireInterpretersEnv = "EXTKERNEL_REQUIRE_INTERPRETERS"

// Interpreter returns the path of the named interpreter (python3, node,
// ...). When it is not on PATH, it skips t, or fails it when
// RequireInterpretersEnv is 1.
func Interpreter(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(RequireInterpretersEnv) == "1" {
			t.Fatalf("%s not found in PATH, and %s=1 requires it", name, RequireInterpretersEnv)
		}
		t.Skipf("%s not found in PATH: skipping the cross-language test (%s=1 makes this a failure)", name, RequireInterpretersEnv)
	}
	return path
}

// RealPython puts the python3 interpreter itself first on PATH, through a
// link in a directory of its own, for the rest of t: a version manager's
// shim (pyenv's python3 is a bash script running pyenv) runs programs a
// confined plugin may not execute, so a confined Python plugin needs a
// PATH whose python3 is the interpreter (docs/security.md,
// "Confinement"). Without python3, it skips t as Interpreter does.
func RealPython(t *testing.T) {
	t.Helper()
	python := Interpreter(t, "python3")
	out, err := exec.Command(python, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("%s: %v", python, err)
	}
	dir := t.TempDir()
	if err := os.Symlink(strings.TrimSpace(string(out)), filepath.Join(dir, "python3")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(filepath.ListSeparator)+os.Getenv("PATH"))
}
