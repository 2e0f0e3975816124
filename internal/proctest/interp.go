package proctest

import (
	"os"
	"os/exec"
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
