package kernel

import (
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

// PlanConfinement returns how a kernel built from cfg would confine pkg's
// plugin on this machine, without a running kernel and without starting
// anything: sidecar.PlanConfinement with the options the kernel starts it
// with (cfg's data root, its default applied; its session; the package's
// plugin_env and its confinement, config.Config.ConfinementOf). Under
// "require" the error is the *sidecar.StartError (phase "confine") its
// start would fail with, returned with the report; a cfg that does not
// validate is an error without one. What `kernelctl plan` and `doctor`
// show.
func PlanConfinement(cfg config.Config, pkg *pluginpkg.Package) (*pluginpkg.ConfinementReport, error) {
	k, err := New(cfg)
	if err != nil {
		return nil, err
	}
	l := k.launches(&pluginpkg.Installed{Packages: []*pluginpkg.Package{pkg}})[pkg.Name]
	o := k.buildOptions(nil, nil).Client
	o.Config, o.Env, o.Limits, o.Confinement = l.Config, l.Env, l.Limits, l.Confinement
	return sidecar.PlanConfinement(pkg, o)
}
