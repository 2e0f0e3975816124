package sidecar

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/internal/confine"
	"github.com/extkernel/extkernel/internal/pinexec"
	"github.com/extkernel/extkernel/internal/pkgfiles"
	"github.com/extkernel/extkernel/internal/process"
)

// launch creates the data directory, resolves the executable, checks it
// against the package's pin and spawns it: no shell, the package directory
// (for a package pin, its verified copy) as working directory, its own
// process group, the allowlisted environment, registered with the host's
// reaper (process.Start). It returns the data directory, or the phase a
// failure belongs to. Nothing runs, and no copy is left, when it fails.
func (c *Client) launch() (dataDir, phase string, err error) {
	if dataDir, err = c.dataDir(); err != nil {
		return "", phaseSpawn, err
	}
	p := c.pkg
	ref := pkgfiles.Ref{Name: p.Name, Dir: p.Dir, Command: c.rt.Command}
	path, err := ref.CommandPath()
	if err != nil {
		return "", phaseSpawn, err
	}
	exe, err := pinexec.Verify(ref, p.Pin, path)
	if err != nil {
		return "", phaseVerify, err
	}
	defer exe.Release()
	c.files = exe.Copy
	defer func() {
		if err != nil {
			c.removeFiles()
		}
	}()
	cfg := process.Config{
		Path: exe.Path,
		Args: append([]string{c.rt.Command}, c.rt.Args...),
		Dir:  exe.Dir,
		Env:  c.buildEnv(dataDir, hostLookupEnv),
		Log:  c.log,
	}
	policy, err := c.confined(path, dataDir)
	if err != nil {
		return "", phaseConfine, err
	}
	if policy != nil {
		confineConfig(&cfg, policy, c.tmp.Path)
	}
	if beforeExec != nil {
		beforeExec(path)
	}
	if c.proc, err = process.Start(cfg); err != nil {
		var ce *confine.Error
		if errors.As(err, &ce) {
			return "", phaseConfine, err
		}
		if exe.Path != path {
			err = fmt.Errorf("%s (run as %s in %s): %w", path, exe.Path, exe.Dir, err)
		}
		return "", phaseSpawn, err
	}
	if exe.Changed() {
		c.proc.Discard()
		return "", phaseVerify, fmt.Errorf("executable %s was modified between its pin check and its exec; not started", path)
	}
	c.direct = process.NewDirectWriter(c.proc.Stdin)
	c.log.Debug("spawn", "path", cfg.Path, "argv", c.redactArgs(cfg.Args), "dir", cfg.Dir,
		"pid", c.proc.PID(), "confined", policy != nil)
	return dataDir, "", nil
}

// beforeExec, when set (by tests only), runs between the pin check and the
// exec with the executable's path.
var beforeExec func(path string)

// pluginDir is the directory the plugin runs in and is told about
// (EXTKERNEL_PLUGIN_DIR): its package directory, or the verified copy of
// it that a package pin runs.
func (c *Client) pluginDir() string {
	if c.files != nil {
		return c.files.Dir
	}
	return c.pkg.Dir
}

// removeFiles removes the verified copy the plugin ran from, if any, once
// nothing runs from it: the process group is gone, or never started.
func (c *Client) removeFiles() {
	c.removeTmp()
	if err := c.files.Remove(); err != nil {
		c.log.Warn("the verified copy of the package is left behind", "dir", c.files.Dir, "error", err)
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

// confineConfig makes cfg start the plugin confined to policy: on Linux
// forked from a confined thread (confine.Start), on macOS and OpenBSD
// through the command line confine.Command returns (sandbox-exec, the
// unveil and pledge helper step); with TMPDIR its temporary directory. A pinned
// executable exec'd through its descriptor (/proc/self/fd/N) is granted
// as that very file.
func confineConfig(cfg *process.Config, policy *confine.Policy, tmp string) {
	if strings.HasPrefix(cfg.Path, "/proc/self/fd/") {
		p := *policy
		p.Exec = append(slices.Clone(p.Exec), cfg.Path)
		policy = &p
	}
	cfg.Path, cfg.Args = confine.Command(policy, cfg.Path, cfg.Args)
	cfg.Wrap = func(start func() error) error { return confine.Start(policy, start) }
	cfg.Env = append(slices.DeleteFunc(cfg.Env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }),
		"TMPDIR="+tmp)
}
