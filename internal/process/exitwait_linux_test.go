//go:build linux && !extkernel_portable

package process

import (
	"errors"
	"io"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/extkernel/extkernel/internal/procstat"
)

// startChild starts name with args, skipping the test when the kernel
// has no pidfd_open(2).
func startChild(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if fd, err := unix.PidfdOpen(cmd.Process.Pid, 0); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Skipf("the kernel gives no pidfd: %v", err)
	} else {
		_ = syscall.Close(fd)
	}
	return cmd
}

// awaitExitWithin runs awaitExit and fails the test if it has not
// returned within bound.
func awaitExitWithin(t *testing.T, pid int, bound time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		awaitExit(pid)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatalf("awaitExit did not return within %v of the process's exit", bound)
	}
}

// TestAwaitExit checks that awaitExit waits for the process, returns once
// it is killed (before it is reaped), that cmd.Wait then reports the
// signal, and that it returns at once for a pid it cannot open.
func TestAwaitExit(t *testing.T) {
	awaitExit(-1)
	cmd := startChild(t, "sleep", "30")
	done := make(chan struct{})
	go func() {
		awaitExit(cmd.Process.Pid)
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("awaitExit returned while the process runs")
	case <-time.After(50 * time.Millisecond):
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("awaitExit did not return after the process was killed")
	}
	if err := cmd.Wait(); cmd.ProcessState == nil || cmd.ProcessState.String() != "signal: killed" {
		t.Fatalf("Wait = %v, state %v; want signal: killed", err, cmd.ProcessState)
	}
}

// TestAwaitExitAfterExit checks a process that exited before awaitExit
// started: its pidfd is already readable when it is registered with the
// poller, and no later event will come (an early version waited for one
// forever, which hung kernelctl's tests once in CI).
func TestAwaitExitAfterExit(t *testing.T) {
	// Goroutines that keep the runtime polling, so that the exit's event
	// is often consumed before awaitExit starts to wait.
	stop := make(chan struct{})
	defer close(stop)
	for range 2 {
		go func() {
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Microsecond):
				}
			}
		}()
	}
	for range 200 {
		cmd := startChild(t, "true")
		for deadline := time.Now().Add(10 * time.Second); ; {
			if st, err := procstat.Read(cmd.Process.Pid); err == nil && st.State == "Z" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the process did not exit")
			}
			time.Sleep(time.Millisecond)
		}
		awaitExitWithin(t, cmd.Process.Pid, 10*time.Second)
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
}

// setPpoll replaces ppoll with fake for the rest of the test. Only tests
// that run no other client may use it.
func setPpoll(t *testing.T, fake func(fd uintptr) (uintptr, syscall.Errno)) {
	t.Helper()
	real := ppoll
	ppoll = fake
	t.Cleanup(func() { ppoll = real })
}

// TestReadableRetriesEINTR checks what readable makes of each answer of
// ppoll(2): a signal that interrupts it (EINTR, which a zero-timeout ppoll
// returns when the runtime's preemption signal or a SIGCHLD arrives) is
// asked again, not taken for the exit. An earlier version counted it as
// readable, so the exit watcher returned while the plugin ran.
func TestReadableRetriesEINTR(t *testing.T) {
	type answer struct {
		n     uintptr
		errno syscall.Errno
	}
	tests := []struct {
		name    string
		answers []answer
		want    bool
		calls   int
	}{
		{name: "running", answers: []answer{{0, 0}}, want: false, calls: 1},
		{name: "exited", answers: []answer{{1, 0}}, want: true, calls: 1},
		{name: "interrupted, running", answers: []answer{{0, syscall.EINTR}, {0, syscall.EINTR}, {0, 0}}, want: false, calls: 3},
		{name: "interrupted, exited", answers: []answer{{0, syscall.EINTR}, {1, 0}}, want: true, calls: 2},
		{name: "bad descriptor", answers: []answer{{0, syscall.EBADF}}, want: true, calls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			setPpoll(t, func(uintptr) (uintptr, syscall.Errno) {
				a := tt.answers[min(calls, len(tt.answers)-1)]
				calls++
				return a.n, a.errno
			})
			if got := readable(0); got != tt.want || calls != tt.calls {
				t.Errorf("readable = %t after %d ppoll calls, want %t after %d", got, calls, tt.want, tt.calls)
			}
		})
	}
}

// TestExitWatcherWakesEarly is the reproducer of a 64-plugin cold start
// under load that failed with `handshake: plugin "bench-55" exited
// unexpectedly (<nil>)`: the exit watcher woke while the plugin ran (its
// ppoll interrupted by a signal, which it took for the exit), and cmd.Wait
// failed at once with EAGAIN because the watcher had made the pidfd
// os.Process waits on non-blocking. Here the first ppoll says "readable"
// while the process runs: Wait must still wait for the real exit (Done
// stays open while the process answers) and report its real exit status.
func TestExitWatcherWakesEarly(t *testing.T) {
	var woke atomic.Int32
	real := ppoll
	setPpoll(t, func(fd uintptr) (uintptr, syscall.Errno) {
		if woke.Add(1) == 1 {
			return 1, 0
		}
		return real(fd)
	})
	p := startCat(t)
	go p.Wait()
	// Registered after setPpoll, so it runs first: on every path the
	// process ends and Wait's watcher stops calling ppoll before the real
	// one is put back.
	t.Cleanup(func() {
		select {
		case <-p.Done():
		default:
			p.Kill()
			<-p.Done()
		}
		p.Reap()
		closeEnds(p)
	})
	// The watcher's first poll comes when Wait's goroutine runs, which on
	// a loaded machine may be after the echo: wait for it, bounded.
	for deadline := time.Now().Add(within); woke.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the exit watcher never polled")
		}
	}
	if _, err := p.Stdin.Write([]byte("hi\n")); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 3)
	if _, err := io.ReadFull(p.Stdout, line); err != nil || string(line) != "hi\n" {
		t.Fatalf("read %q, %v; want the echo of a running process", line, err)
	}
	select {
	case <-p.Done():
		t.Fatalf("Wait returned while the process runs: %s", p.ExitStatus())
	default:
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return after the kill")
	}
	if got := p.ExitStatus(); got != "signal: killed" || strings.Contains(got, "<nil>") {
		t.Errorf("exit status %q, want signal: killed", got)
	}
}

// TestExitStatusUnknown checks the exit status reported when the wait
// failed: what is known, never "<nil>".
func TestExitStatusUnknown(t *testing.T) {
	p := &Process{cmd: new(exec.Cmd), waitErr: errors.New("waitid: no child processes")}
	if got, want := p.ExitStatus(), "exit status unknown: waitid: no child processes"; got != want {
		t.Errorf("ExitStatus = %q, want %q", got, want)
	}
}
