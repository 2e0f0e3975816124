package sidecar

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/extkernel/extkernel/internal/confine"
	"github.com/extkernel/extkernel/internal/pkgfiles"
	"github.com/extkernel/extkernel/pluginpkg"
)

// reportOf converts confine's report.
func reportOf(r *confine.Report) *pluginpkg.ConfinementReport {
	return &pluginpkg.ConfinementReport{Mode: r.Mode, Requested: r.Requested, Granted: r.Granted, Denied: r.Denied,
		Effective: r.Effective, Mechanism: r.Mechanism, LandlockABI: r.ABI,
		Enforced: r.Enforced, NotEnforced: r.NotEnforced, Notes: r.Notes}
}

// PlanConfinement returns how Start would confine pkg's plugin with opts
// on this machine, without starting anything: what kernelctl plan and
// doctor show. Under "require" it also returns the *StartError (phase
// "confine") that Start would fail with. The plugin's temporary
// directory is shown as ${tmp}.
func PlanConfinement(pkg *pluginpkg.Package, opts Options) (*pluginpkg.ConfinementReport, error) {
	if pkg.Manifest.Runtime == nil {
		return nil, &StartError{Plugin: pkg.Name, Phase: phaseSpawn, Err: errors.New("declarative package: no runtime to start")}
	}
	c := &Client{pkg: pkg, rt: pkg.Manifest.Runtime, opts: opts}
	path, err := (pkgfiles.Ref{Name: pkg.Name, Dir: pkg.Dir, Command: c.rt.Command}).CommandPath()
	if err != nil {
		return nil, &StartError{Plugin: pkg.Name, Phase: phaseSpawn, Err: err}
	}
	data := ""
	if opts.DataRoot != "" {
		data = filepath.Join(opts.DataRoot, pkg.Name)
	}
	_, r, err := confine.Plan(c.confineSpec(path, pkg.Dir, data, "${tmp}"))
	if err != nil {
		return reportOf(r), &StartError{Plugin: pkg.Name, Phase: phaseConfine, Err: err}
	}
	return reportOf(r), nil
}

// confineSpec is the confinement of the plugin that runs command from
// dir, with its data and temporary directories.
func (c *Client) confineSpec(command, dir, data, tmp string) confine.Spec {
	conf := c.opts.Confinement
	return confine.Spec{
		Mode: conf.Mode, Requested: c.pkg.Manifest.Permissions, Grants: conf.Grants, Denies: conf.Denies,
		Vars:    confine.Vars{Package: dir, Data: data, Workspace: c.opts.Session["workspace"], Tmp: tmp},
		Command: command, PATH: c.lookPATH(),
	}
}

// lookPATH is the PATH the plugin gets, which its exec names are looked
// up on.
func (c *Client) lookPATH() string {
	for _, kv := range c.buildEnv("", hostLookupEnv) {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return ""
}

// confined plans the plugin's confinement for launch: it holds its
// temporary directory (confine.HoldTmp), and returns the policy (nil
// when off) and the report, which Confinement returns from then on.
func (c *Client) confined(command, dataDir string) (*confine.Policy, error) {
	if m := c.opts.Confinement.Mode; m == "" || m == pluginpkg.ConfineOff {
		c.confinement = &pluginpkg.ConfinementReport{Mode: pluginpkg.ConfineOff}
		return nil, nil
	}
	tmp, err := confine.HoldTmp(c.opts.DataRoot, c.pkg.Name)
	if err != nil {
		return nil, fmt.Errorf("the plugin's temporary directory: %w", err)
	}
	c.tmp = tmp
	p, r, err := confine.Plan(c.confineSpec(command, c.pluginDir(), dataDir, tmp.Path))
	c.confinement = reportOf(r)
	return p, err
}

// Confinement returns how the plugin is confined and what this machine
// enforces of it; nil before Start planned it.
func (c *Client) Confinement() *pluginpkg.ConfinementReport { return c.confinement }

// removeTmp empties or removes the plugin's temporary directory, if
// any, once nothing runs in it (confine.Tmp.Release).
func (c *Client) removeTmp() {
	if c.tmp == nil {
		return
	}
	dir := c.tmp.Path
	if err := c.tmp.Release(); err != nil {
		c.log.Warn("the plugin's temporary directory is left with files in it", "dir", dir, "error", err)
	}
}
