//go:build unix

package process

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within bounds every wait of a test; no test asserts on elapsed time.
const within = 10 * time.Second

// startCat starts cat, which echoes its stdin until EOF; the test owns
// the process.
func startCat(t *testing.T) *Process {
	t.Helper()
	path, err := exec.LookPath("cat")
	if err != nil {
		t.Skip(err)
	}
	p, err := Start(Config{Path: path, Args: []string{"cat"}, Dir: t.TempDir(), Env: []string{"A=1"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func closeEnds(p *Process) {
	for _, f := range []*os.File{p.Stdin, p.Stdout, p.Stderr} {
		f.Close()
	}
}

// waitDone fails the test unless p's Wait returns within the test bound.
func waitDone(t *testing.T, p *Process) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(within):
		t.Fatal("the process did not exit")
	}
}

// TestProcessLifecycle starts cat in its own process group, talks to it
// through the host's pipe ends (whose deadlines work: they are polled),
// ends it each way the client does, and checks the exit status, that the
// group is reaped and gone, and that Discard leaves nothing behind.
func TestProcessLifecycle(t *testing.T) {
	tests := []struct {
		name   string
		end    func(p *Process) error
		status string
	}{
		{"stdin closed", func(p *Process) error { return p.Stdin.Close() }, "exit status 0"},
		{"terminate", (*Process).Terminate, "signal: terminated"},
		{"kill", (*Process).Kill, "signal: killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startCat(t)
			go p.Wait()
			if pgid, err := syscall.Getpgid(p.PID()); err != nil || pgid != p.PID() {
				t.Errorf("process group %d, %v; want its own, %d", pgid, err, p.PID())
			}
			if err := p.Stdout.SetReadDeadline(time.Now().Add(within)); err != nil {
				t.Errorf("SetReadDeadline on the host's end: %v", err)
			}
			if _, err := p.Stdin.Write([]byte("ping\n")); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 5)
			if _, err := io.ReadFull(p.Stdout, got); err != nil || string(got) != "ping\n" {
				t.Fatalf("read %q, %v", got, err)
			}
			if err := tt.end(p); err != nil {
				t.Fatal(err)
			}
			waitDone(t, p)
			if got := p.ExitStatus(); got != tt.status {
				t.Errorf("exit status %q, want %q", got, tt.status)
			}
			p.Reap()
			closeEnds(p)
			if err := syscall.Kill(-p.PID(), 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("process group %d still exists after Reap: %v", p.PID(), err)
			}
			if err := p.Kill(); err != nil {
				t.Errorf("Kill of a group that is gone: %v, want nil", err)
			}
		})
	}
	t.Run("discard", func(t *testing.T) {
		p := startCat(t)
		p.Discard()
		if got := p.ExitStatus(); got != "signal: killed" {
			t.Errorf("exit status %q, want signal: killed", got)
		}
		if _, err := p.Stdin.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
			t.Errorf("write after Discard: %v, want os.ErrClosed", err)
		}
	})
}

// TestStartFails checks that a failed exec leaves nothing behind and
// names the failure.
func TestStartFails(t *testing.T) {
	p, err := Start(Config{Path: "/nonexistent/plugin", Args: []string{"plugin"}})
	if p != nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Start = %v, %v; want a not-exist error", p, err)
	}
}

// TestLimits checks SetLimits where limits are supported (the soft and
// hard values of the running process) and its refusal elsewhere.
func TestLimits(t *testing.T) {
	p := startCat(t)
	go p.Wait()
	defer func() {
		_ = p.Kill()
		waitDone(t, p)
		p.Reap()
		closeEnds(p)
	}()
	err := p.SetLimits(64, 0)
	if !LimitsSupported {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("SetLimits = %v, want errors.ErrUnsupported", err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", p.PID()))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "Max open files") {
			if f := strings.Fields(line); len(f) < 5 || f[3] != "64" || f[4] != "64" {
				t.Errorf("limits line %q, want soft and hard 64", line)
			}
			return
		}
	}
	t.Error("no open files limit in /proc/<pid>/limits")
}
