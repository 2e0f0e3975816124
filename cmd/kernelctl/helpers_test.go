package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"go.uber.org/goleak"

	"github.com/extkernel/extkernel/internal/proctest"
)

// helperEnv, when set, makes the test binary act as kernelctl: TestMain
// runs it with the binary's arguments (the os/exec helper-process pattern).
const helperEnv = "KERNELCTL_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	// The script tests (script_test.go) run the test binary as kernelctl,
	// from a copy on their PATH; testscript.Main runs that, or the tests.
	testscript.Main(leakCheckedM{m}, map[string]func(){
		"kernelctl": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// leakCheckedM runs the tests as goleak.VerifyTestMain does: a run that
// passed fails if goroutines are left behind.
type leakCheckedM struct{ m *testing.M }

func (l leakCheckedM) Run() int {
	code := l.m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	if scriptedBin != "" {
		os.RemoveAll(filepath.Dir(scriptedBin))
	}
	return code
}

var (
	demoOnce sync.Once
	demoErr  error
	demoOut  []byte
)

// buildDemo compiles the demo home's plugins once per test binary, with the
// repository's own build command.
func buildDemo(t *testing.T) {
	t.Helper()
	demoOnce.Do(func() {
		cmd := exec.Command("go", "run", "../../testdata/demo/build", demoHome)
		demoOut, demoErr = cmd.CombinedOutput()
	})
	if demoErr != nil {
		t.Fatalf("building the demo plugins: %v\n%s", demoErr, demoOut)
	}
}

// children returns the pids of live processes whose parent is this test
// process (zombies included: an unreaped child is a leak too).
func children(t *testing.T) []int {
	t.Helper()
	return childrenOf(t, os.Getpid())
}

// childrenOf returns the pids of the processes whose parent is ppid.
func childrenOf(t *testing.T, ppid int) []int {
	t.Helper()
	pids, ok := proctest.Children(ppid)
	if !ok {
		t.Skip("no /proc to check for leftover processes")
	}
	return pids
}

// noChildren fails the test if any child process of the test remains.
func noChildren(t *testing.T) {
	t.Helper()
	if kids := children(t); len(kids) > 0 {
		t.Errorf("child processes left behind: %v", kids)
	}
}
