package sidecar

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// pipes holds both ends of the three stdio pipes until the child has them.
type pipes struct {
	stdinR, stdinW   *os.File
	stdoutR, stdoutW *os.File
	stderrR, stderrW *os.File
	inodes           [3]uint64 // of stdin, stdout and stderr (see pipeInode)
}

func newPipes() (*pipes, error) {
	p := new(pipes)
	var err error
	if p.stdinR, p.stdinW, p.inodes[0], err = pipe(1); err != nil {
		return nil, err
	}
	if p.stdoutR, p.stdoutW, p.inodes[1], err = pipe(0); err != nil {
		p.closeAll()
		return nil, err
	}
	if p.stderrR, p.stderrW, p.inodes[2], err = pipe(0); err != nil {
		p.closeAll()
		return nil, err
	}
	return p, nil
}

// pipe returns a pipe whose end hostEnd (0, the read end, or 1) is the
// host's: non-blocking and polled by the runtime, as os.Pipe makes both
// ends. The child's end stays blocking and is never registered with the
// poller (os.Pipe would register it, exec switch it back to blocking and
// closing it unregister it: four system calls saved per pipe). It also
// returns the pipe's inode, by which processes that still hold the pipe
// when the plugin is gone are found (killPipeHolders).
func pipe(hostEnd int) (r, w *os.File, inode uint64, err error) {
	var fd [2]int
	if err := syscall.Pipe2(fd[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, 0, os.NewSyscallError("pipe2", err)
	}
	if err := syscall.SetNonblock(fd[hostEnd], true); err != nil {
		syscall.Close(fd[0])
		syscall.Close(fd[1])
		return nil, nil, 0, os.NewSyscallError("setnonblock", err)
	}
	inode = pipeInode(fd[0])
	// NewFile polls a non-blocking descriptor.
	return os.NewFile(uintptr(fd[0]), "|0"), os.NewFile(uintptr(fd[1]), "|1"), inode, nil
}

// closeChildEnds closes the ends the child inherited; the host keeps the
// others.
func (p *pipes) closeChildEnds() {
	for _, f := range []*os.File{p.stdinR, p.stdoutW, p.stderrW} {
		if f != nil {
			f.Close()
		}
	}
}

func (p *pipes) closeAll() {
	p.closeChildEnds()
	for _, f := range []*os.File{p.stdinW, p.stdoutR, p.stderrR} {
		if f != nil {
			f.Close()
		}
	}
}

// launch creates the data directory, resolves the executable, checks it
// against the package's pin and spawns it. It returns the data directory,
// or the phase a failure belongs to. Nothing runs when it fails.
func (c *Client) launch() (dataDir, phase string, err error) {
	if dataDir, err = c.dataDir(); err != nil {
		return "", PhaseSpawn, err
	}
	path, err := c.pkg.CommandPath()
	if err != nil {
		return "", PhaseSpawn, err
	}
	exe, err := c.verify(path)
	if err != nil {
		return "", PhaseVerify, err
	}
	defer exe.release()
	if beforeExec != nil {
		beforeExec(path)
	}
	if err := c.spawn(exe.path, dataDir); err != nil {
		if exe.path != path {
			err = fmt.Errorf("%s (run as %s): %w", path, exe.path, err)
		}
		return "", PhaseSpawn, err
	}
	if exe.changed(c.pkg.Pin) {
		c.discardProcess()
		return "", PhaseVerify, fmt.Errorf("executable %s was modified between its pin check and its exec; not started", path)
	}
	return dataDir, "", nil
}

// beforeExec, when set (by tests only), runs between the pin check and the
// exec with the executable's path.
var beforeExec func(path string)

// spawn starts the executable at path: no shell, the package directory as
// working directory, its own process group, the allowlisted environment.
// The host's ends of the pipes are stored in c. Cancelling c's life context
// SIGKILLs the process group (exec.Cmd.Cancel). The group is registered
// with the host's reaper, which kills it if the host dies (see reaper).
func (c *Client) spawn(path, dataDir string) error {
	p, err := newPipes()
	if err != nil {
		return fmt.Errorf("create pipes: %w", err)
	}
	rt := c.pkg.Manifest.Runtime
	cmd := exec.CommandContext(c.life, path, rt.Args...)
	cmd.Args[0] = rt.Command
	cmd.Dir = c.pkg.Dir
	cmd.Env = buildEnv(c.pkg, c.opts.Env, dataDir, hostLookupEnv)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.stdinR, p.stdoutW, p.stderrW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return c.signalGroup(syscall.SIGKILL) }
	cmd.WaitDelay = c.opts.KillGrace
	if err := cmd.Start(); err != nil {
		p.closeAll()
		return err
	}
	p.closeChildEnds()
	c.cmd = cmd
	c.pid = cmd.Process.Pid
	c.stdin, c.stdout, c.stderr = p.stdinW, p.stdoutR, p.stderrR
	c.pipeInodes = p.inodes
	reaperAdd(c.pid, c.log)
	c.stdinRaw = rawWriter(c.stdin)
	c.direct.write = c.direct.writeFD
	return nil
}

// signalGroup sends sig to the plugin's process group. A group that no
// longer exists is not an error.
func (c *Client) signalGroup(sig syscall.Signal) error {
	if err := syscall.Kill(-c.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal process group %d: %w", c.pid, err)
	}
	return nil
}

// reapGroup waits for every child of the host still in the plugin's process
// group. After the group was SIGKILLed this returns at once unless the host
// is a child subreaper (PR_SET_CHILD_SUBREAPER), in which case orphaned
// grandchildren were re-parented to it and are collected here instead of
// lingering as zombies. It must only run after cmd.Wait returned, or it
// could steal the leader's exit status.
func (c *Client) reapGroup() {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(-c.pid, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil { // ECHILD: none left
			return
		}
	}
}

// dataDir creates and returns the plugin's data directory, or "" when
// Options.DataRoot is empty.
func (c *Client) dataDir() (string, error) {
	if c.opts.DataRoot == "" {
		return "", nil
	}
	dir := filepath.Join(c.opts.DataRoot, c.pkg.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create data directory: %w", err)
	}
	return dir, nil
}
