package proctest

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
)

// TestChildren starts a child (this test binary, waiting on its stdin)
// and finds it among the test's children on Linux; elsewhere Children
// must say it cannot tell.
func TestChildren(t *testing.T) {
	if os.Getenv("PROCTEST_CHILD") == "1" {
		os.Stdin.Read(make([]byte, 1)) // until the parent closes the pipe
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildren$")
	cmd.Env = append(os.Environ(), "PROCTEST_CHILD=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Wait()
	defer stdin.Close()

	pids, ok := Children(os.Getpid())
	if runtime.GOOS != "linux" {
		if ok || pids != nil {
			t.Fatalf("Children on %s = %v, %v; want nil, false", runtime.GOOS, pids, ok)
		}
		return
	}
	if !ok {
		t.Skip("no /proc")
	}
	if !slices.Contains(pids, pid) {
		t.Errorf("Children = %v, want it to hold the running child %d", pids, pid)
	}
	if others, _ := Children(pid); len(others) != 0 {
		t.Errorf("Children of the child = %v, want none", others)
	}
}
