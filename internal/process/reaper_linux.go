//go:build linux && !extkernel_portable

package process

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
)

// init turns the process into the reaper when the host started it so
// (reaperEnv): it runs before the program's main, in any binary that
// imports this package, and never returns. The reaper exits with
// syscall.Exit, which skips what os.Exit runs first (the race detector's
// one-second pause, in race-enabled builds).
func init() {
	if os.Getenv(reaperEnv) == reaperMode {
		runReaper()
		syscall.Exit(0)
	}
}

// reaper is the host's side of its reaper process: the write end of the
// reaper's stdin, on which each plugin's process group is registered
// ("+pgid\n") once it started and withdrawn ("-pgid\n") once it was killed
// and reaped.
var reaper struct {
	mu      sync.Mutex
	fd      int  // write end of the reaper's stdin (non-blocking), or -1
	started bool // a start was attempted
	pid     int  // the reaper's pid once it runs
	ready   chan struct{}
	log     hclog.Logger // of the client whose spawn started it
}

// reaperWarn logs, once per host process, that the reaper is unavailable.
var reaperWarn sync.Once

// reaperAdd registers the process group pgid with the reaper, starting it
// on the first call. It never fails: without a reaper the host runs as it
// did before, and the reason is logged once.
func reaperAdd(pgid int, log hclog.Logger) {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	if !reaper.started {
		reaper.started = true
		reaper.fd = -1
		reaper.log = log
		reaper.ready = make(chan struct{})
		r, err := reaperPipe()
		if err != nil {
			close(reaper.ready)
			reaperFailed(log, err)
			return
		}
		go startReaper(r, log)
	}
	reaperSendLocked('+', pgid)
}

// reaperRemove withdraws the process group pgid, which is gone.
func reaperRemove(pgid int) {
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	reaperSendLocked('-', pgid)
}

// reaperPipe creates the reaper's stdin pipe: the host keeps the
// non-blocking write end in reaper.fd and returns the read end.
func reaperPipe() (*os.File, error) {
	var fd [2]int
	if err := syscall.Pipe2(fd[:], syscall.O_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("pipe2", err)
	}
	if err := syscall.SetNonblock(fd[1], true); err != nil {
		syscall.Close(fd[0])
		syscall.Close(fd[1])
		return nil, os.NewSyscallError("setnonblock", err)
	}
	reaper.fd = fd[1]
	return os.NewFile(uintptr(fd[0]), "reaper"), nil
}

// reaperReadyTimeout bounds how long the host waits for a starting reaper
// to say it runs.
const reaperReadyTimeout = 10 * time.Second

// startReaper starts the reaper from the host's own executable with its
// stdin on r, off the caller's path: registrations written meanwhile wait
// in the pipe. It returns once the reaper said it runs (a byte on its
// stdout), or was killed and reaped because it did not.
func startReaper(r *os.File, log hclog.Logger) {
	pid, err := execReaper(r)
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	defer close(reaper.ready)
	if err != nil {
		reaperFailed(log, err)
		return
	}
	reaper.pid = pid
}

// execReaper runs the reaper and waits for its first byte. A reaper that
// runs is released, never waited for: it lives until the host exits.
func execReaper(r *os.File) (int, error) {
	defer r.Close()
	ready, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer ready.Close()
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{ReaperName}
	cmd.Env = []string{reaperEnv + "=" + reaperMode}
	cmd.Stdin, cmd.Stdout = r, w
	err = cmd.Start()
	w.Close()
	if err != nil {
		return 0, fmt.Errorf("start reaper: %w", err)
	}
	_ = ready.SetReadDeadline(time.Now().Add(reaperReadyTimeout))
	if _, err := ready.Read(make([]byte, 1)); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return 0, fmt.Errorf("reaper %d did not start (%s): %w", cmd.Process.Pid, cmd.ProcessState, err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release()
	return pid, nil
}

// reaperSendLocked writes one registration. A write that fails (the
// reaper is gone, or its pipe is full because it stopped reading) turns
// the reaper off.
func reaperSendLocked(op byte, pgid int) {
	if reaper.fd < 0 {
		return
	}
	var buf [24]byte
	line := append(strconv.AppendInt(append(buf[:0], op), int64(pgid), 10), '\n')
	if n, err := syscall.Write(reaper.fd, line); err != nil || n != len(line) {
		if err == nil {
			err = syscall.EIO
		}
		reaperFailed(reaper.log, os.NewSyscallError("write", err))
	}
}

// reaperFailed turns the reaper off for the life of the host and logs
// why, once. reaper.mu is held.
func reaperFailed(log hclog.Logger, err error) {
	if reaper.fd >= 0 {
		syscall.Close(reaper.fd)
		reaper.fd = -1
	}
	reaperWarn.Do(func() {
		if log != nil {
			log.Warn("no reaper: a plugin's process group may outlive a host killed with SIGKILL", "error", err)
		}
	})
}

// ReaperPID returns the running reaper's pid, or 0 if none runs, once its
// start was attempted (it waits for a starting reaper).
func ReaperPID() int {
	reaper.mu.Lock()
	ready := reaper.ready
	reaper.mu.Unlock()
	if ready == nil {
		return 0
	}
	<-ready
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	if reaper.fd < 0 {
		return 0
	}
	return reaper.pid
}

// runReaper is the reaper's main. It reads registrations on stdin until
// EOF, which comes when the host exits (it alone holds the write end), or
// until its parent (the host) exits; then it SIGKILLs every process group
// still registered. Terminal signals are ignored, so that Ctrl-C, which
// reaches the host's whole process group, does not end the reaper before
// the host.
func runReaper() {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	_, _ = os.Stdout.Write([]byte{'+'}) // running: see execReaper
	os.Stdout.Close()
	parent := make(chan struct{}, 1)
	go watchParent(parent)
	for _, pgid := range reapGroups(reaperInput(), parent, reaperDrain) {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// reaperDrain bounds how long the reaper, told by its pidfd that the host
// died, goes on reading registrations the host wrote before it died. The
// pipe's EOF normally ends the reading at once: only a write end another
// process inherited keeps it open.
const reaperDrain = 200 * time.Millisecond

// reaperInput returns the reaper's stdin, made non-blocking so that a read
// deadline can end a read that waits (os.Stdin itself, which cannot, if
// that fails).
func reaperInput() *os.File {
	if err := syscall.SetNonblock(syscall.Stdin, true); err != nil {
		return os.Stdin
	}
	return os.NewFile(uintptr(syscall.Stdin), "reaper-stdin")
}

// reapGroups reads registrations ("+pgid", "-pgid") from in until its
// EOF, or until parent says the host died, and returns the process groups
// still registered, sorted. The host's death does not cut the reading
// short: registrations it wrote before dying may still be in the pipe,
// unread (the host does not wait for the reaper to read them), so it
// reads on until the pipe is empty, at most drain longer. Group 1 and
// below (kill(-1) is every process) and the reaper's own group are never
// returned.
func reapGroups(in *os.File, parent <-chan struct{}, drain time.Duration) []int {
	var mu sync.Mutex
	groups := make(map[int]bool)
	own := syscall.Getpgrp()
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			line := sc.Text()
			pgid, err := strconv.Atoi(line[min(1, len(line)):])
			if err != nil || pgid <= 1 || pgid == own {
				continue
			}
			mu.Lock()
			switch line[0] {
			case '+':
				groups[pgid] = true
			case '-':
				delete(groups, pgid)
			}
			mu.Unlock()
		}
	}()
	select {
	case <-scanned:
	case <-parent:
		if in.SetReadDeadline(time.Now().Add(drain)) == nil {
			<-scanned // EOF, or the deadline ends a read that waits
		} else {
			timer := time.NewTimer(drain)
			select {
			case <-scanned:
			case <-timer.C:
			}
			timer.Stop()
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Sorted(maps.Keys(groups))
}

// watchParent signals end when the reaper's parent, the host, exits. It is
// a second way to see the host die, for a host whose end of the pipe was
// inherited by a process that outlives it. Without pidfds it does nothing.
func watchParent(end chan<- struct{}) {
	host := os.Getppid()
	pidfd, err := unix.PidfdOpen(host, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	if os.Getppid() != host { // the host died before the pidfd was opened
		unix.Close(pidfd)
		end <- struct{}{}
		return
	}
	awaitPidfd(pidfd)
	if os.Getppid() == host {
		// The pidfd could not be polled: the host still runs, and the
		// reaper's input reaching EOF remains the sign of its death.
		return
	}
	end <- struct{}{}
}
