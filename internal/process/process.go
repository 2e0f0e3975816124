package process

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Config describes the process to start.
type Config struct {
	// Path is the executable to run.
	Path string
	// Args is the command line, Args[0] included.
	Args []string
	// Dir is the working directory.
	Dir string
	// Env is the whole environment, "KEY=value" each.
	Env []string
	// Wrap, if set, runs the fork and exec (its argument) for Start: a
	// confined plugin is forked from a restricted thread (confine.Start).
	Wrap func(start func() error) error
	// Log receives, once per host process, why the reaper cannot run.
	Log hclog.Logger
}

// Process is one started plugin process, the leader of its own process
// group (its pid is the group's id).
type Process struct {
	// Stdin, Stdout and Stderr are the host's ends of the process's stdio
	// pipes: non-blocking and polled by the runtime, so deadlines apply.
	// The caller closes them.
	Stdin, Stdout, Stderr *os.File

	cmd     *exec.Cmd
	pid     int
	inodes  [3]uint64     // of the stdio pipes, 0 where unknown (see KillPipeHolders)
	done    chan struct{} // closed when Wait returned
	waitErr error         // cmd.Wait's error, set before done closes
}

// Start runs cfg's executable in a process group of its own, with its
// stdio on pipes, and registers the group with the host's reaper (which
// it starts on the first call). On failure nothing runs.
func Start(cfg Config) (*Process, error) {
	if err := Supported(); err != nil {
		return nil, err
	}
	pp, err := newPipes()
	if err != nil {
		return nil, fmt.Errorf("create pipes: %w", err)
	}
	cmd := &exec.Cmd{Path: cfg.Path, Args: cfg.Args, Dir: cfg.Dir, Env: cfg.Env}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pp.stdinR, pp.stdoutW, pp.stderrW
	cmd.SysProcAttr = groupAttr()
	start := cmd.Start
	if cfg.Wrap != nil {
		start = func() error { return cfg.Wrap(cmd.Start) }
	}
	if err := start(); err != nil {
		pp.closeAll()
		return nil, err
	}
	pp.closeChildEnds()
	p := &Process{
		Stdin: pp.stdinW, Stdout: pp.stdoutR, Stderr: pp.stderrR,
		cmd: cmd, pid: cmd.Process.Pid, inodes: pp.inodes, done: make(chan struct{}),
	}
	reaperAdd(p.pid, cfg.Log)
	return p, nil
}

// PID returns the process id, which is also its process group id.
func (p *Process) PID() int { return p.pid }

// Wait blocks until the process exited and reaps it, then closes Done. On
// Linux it waits parked in the runtime's poller on a pidfd, costing no
// thread; elsewhere cmd.Wait blocks a thread in wait(2). Exactly one
// goroutine calls it, once.
func (p *Process) Wait() {
	awaitExit(p.pid)
	p.waitErr = p.cmd.Wait() // the status is read from cmd.ProcessState
	close(p.done)
}

// Done returns a channel closed once Wait reaped the process.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitStatus returns the process's final state as os.ProcessState
// reports it ("exit status 0", "signal: killed"), or, when the wait failed
// and the state is unknown, says so with the wait's error. It must only
// run after Done closed.
func (p *Process) ExitStatus() string {
	if ps := p.cmd.ProcessState; ps != nil {
		return ps.String()
	}
	return fmt.Sprintf("exit status unknown: %v", p.waitErr)
}

// Terminate sends SIGTERM to the process group. A group that no longer
// exists is not an error.
func (p *Process) Terminate() error { return signalGroup(p.pid, sigTerm) }

// Kill sends SIGKILL to the process group. A group that no longer exists
// is not an error.
func (p *Process) Kill() error { return signalGroup(p.pid, sigKill) }

// Reap kills what is left of the process group (grandchildren), waits for
// every child of the host still in it and withdraws the group from the
// reaper. After the SIGKILL the wait returns at once unless the host is a
// child subreaper (PR_SET_CHILD_SUBREAPER), in which case orphaned
// grandchildren were re-parented to it and are collected here instead of
// lingering as zombies. It must only run after Done closed, or it could
// steal the leader's exit status.
func (p *Process) Reap() {
	_ = p.Kill()
	reapGroup(p.pid)
	reaperRemove(p.pid)
}

// Discard kills a process that must not run, waits for it, reaps its
// group and closes the host's pipe ends. Nothing else may use p.
func (p *Process) Discard() {
	_ = p.Kill()
	p.Wait()
	p.Reap()
	for _, f := range []*os.File{p.Stdin, p.Stdout, p.Stderr} {
		f.Close()
	}
}

// KillPipeHolders SIGKILLs every process other than the host that still
// holds one of the process's stdio pipes (a helper that left its process
// group), waiting within bound for each to exit, and returns their pids.
// Only Linux finds them (through /proc); elsewhere it returns nil.
func (p *Process) KillPipeHolders(bound time.Duration) []int {
	return killPipeHolders(p.inodes[:], bound)
}

// SetLimits limits the running process's open files (RLIMIT_NOFILE) and
// address space in bytes (RLIMIT_AS), soft and hard values alike; zero
// leaves a limit as the process inherited it. Outside Linux (and under
// extkernel_portable) a non-zero limit fails with an error wrapping
// errors.ErrUnsupported.
func (p *Process) SetLimits(openFiles, addressSpace uint64) error {
	for _, r := range []struct {
		name     string
		resource int
		value    uint64
	}{
		{"open files", rlimitNOFILE, openFiles},
		{"address space", rlimitAS, addressSpace},
	} {
		if r.value == 0 {
			continue
		}
		if err := setLimit(p.pid, r.resource, r.value); err != nil {
			return fmt.Errorf("set %s limit to %d: %w", r.name, r.value, err)
		}
	}
	return nil
}
