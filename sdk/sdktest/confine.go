package sdktest

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/internal/confine"
	"github.com/extkernel/extkernel/internal/process"
	"github.com/extkernel/extkernel/pluginpkg"
)

// planConfinement plans the plugin's confinement as the kernel plans it
// (Options.Confinement; docs/security.md, "Confinement") and records what
// it is in the report. It reports false when the plugin cannot start:
// under "require", a rule this machine cannot enforce fails the handshake
// case, as the kernel refuses to start it. Under "best-effort" on a
// system where nothing confines, the plugin runs unconfined, and the
// report says so. Its error is the suite's own.
func (r *runner) planConfinement(env []string) (bool, error) {
	c := r.opts.Confinement
	if c.Mode == "" || c.Mode == pluginpkg.ConfineOff {
		r.rep.Confinement = pluginpkg.ConfineOff
		return true, nil
	}
	if msg := pluginpkg.CheckConfinementMode(c.Mode); msg != "" {
		return false, fmt.Errorf("conformance: %s", msg)
	}
	tmp, err := os.MkdirTemp("", "sdktest-tmp-")
	if err != nil {
		return false, fmt.Errorf("conformance: temporary directory: %w", err)
	}
	r.tmp = tmp
	p, rep, err := confine.Plan(confine.Spec{Mode: c.Mode, Requested: r.pkg.Manifest.Permissions, Grants: c.Grants, Denies: c.Denies,
		Vars:    confine.Vars{Package: r.rep.Dir, Data: r.dataDir, Workspace: r.opts.Session["workspace"], Tmp: tmp},
		Command: r.command, PATH: envValue(env, "PATH")})
	r.rep.Confinement = rep.String()
	if err != nil {
		r.add(Case{Name: caseHandshake, Status: Fail, Reason: fmt.Sprintf("start %s: confine: %v", r.pkg.Manifest.Runtime.Command, err)})
		return false, nil
	}
	if rep.Mechanism == "none" {
		r.rep.Confinement += "; runs unconfined"
		return true, nil
	}
	r.policy = p
	r.denied = &denials{eff: rep.Effective, dir: r.rep.Dir, system: slices.Concat(p.Read, p.Exec, p.Devices)}
	return true, nil
}

// confineConfig makes cfg start the plugin confined to policy as package
// sidecar does (confine.Command and confine.Start: on Linux, forked from
// a confined thread), with TMPDIR the plugin's temporary directory tmp.
func confineConfig(cfg *process.Config, policy *confine.Policy, tmp string) {
	cfg.Path, cfg.Args = confine.Command(policy, cfg.Path, cfg.Args)
	cfg.Wrap = func(start func() error) error { return confine.Start(policy, start) }
	cfg.Env = append(slices.DeleteFunc(slices.Clone(cfg.Env), func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }),
		"TMPDIR="+tmp)
}

// envValue returns the value of the variable name in env, or "".
func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// withDenials appends to a failed case's reason what the plugin was
// denied over the run, when its reason does not say it already: the
// denial is most often why it failed.
func withDenials(c Case, denied []string) Case {
	if c.Status != Fail {
		return c
	}
	for _, d := range denied {
		if !strings.Contains(c.Reason, d) {
			c.Reason += "; " + d
		}
	}
	return c
}
