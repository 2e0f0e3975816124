package sidecar

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/extkernel/extkernel/internal/pinexec"
	"github.com/extkernel/extkernel/internal/pkgfiles"
	"github.com/extkernel/extkernel/internal/process"
)

// launch creates the data directory, resolves the executable, checks it
// against the package's pin and spawns it: no shell, the package directory
// as working directory, its own process group, the allowlisted
// environment, registered with the host's reaper (process.Start). It
// returns the data directory, or the phase a failure belongs to. Nothing
// runs when it fails.
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
	if beforeExec != nil {
		beforeExec(path)
	}
	c.proc, err = process.Start(process.Config{
		Path: exe.Path,
		Args: append([]string{c.rt.Command}, c.rt.Args...),
		Dir:  p.Dir,
		Env:  c.buildEnv(dataDir, hostLookupEnv),
		Log:  c.log,
	})
	if err != nil {
		if exe.Path != path {
			err = fmt.Errorf("%s (run as %s): %w", path, exe.Path, err)
		}
		return "", phaseSpawn, err
	}
	if exe.Changed(p.Pin) {
		c.proc.Discard()
		return "", phaseVerify, fmt.Errorf("executable %s was modified between its pin check and its exec; not started", path)
	}
	c.direct = process.NewDirectWriter(c.proc.Stdin)
	return dataDir, "", nil
}

// beforeExec, when set (by tests only), runs between the pin check and the
// exec with the executable's path.
var beforeExec func(path string)

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
