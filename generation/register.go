package generation

import (
	"errors"
	"strings"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
)

// register validates the predicted contributions as a build validates the
// declarations of the members it runs: one contribution.Builder under the
// host's spec, the isolation rule of optional plugins
// (contribution.Isolate) applied to its problems, the plugins it leaves
// out dropped with the build's cascade (leaveOut), and the registry built
// again from the rest. What the registry publishes becomes to's
// contributions (a point or slot the host does not declare is dropped
// with the registry's warning when the spec is not strict); its warnings
// become the plan's. A problem the rule cannot pin on an optional plugin
// would fail the build: each such problem is a plan problem, and to keeps
// the contributions as predicted. gone holds the plugins already left out.
// Each round leaves at least one plugin out, so the loop ends.
func (p *Plan) register(to *Snapshot, spec contribution.HostSpec, cl *capability.Closure, gone map[string]string) {
	for {
		b := contribution.NewBuilder(spec)
		for _, c := range to.Contributions {
			b.Add(c.contribution())
		}
		reg, err := b.Build()
		if err == nil {
			for _, w := range reg.Warnings() {
				p.Warnings = append(p.Warnings, w.Message)
			}
			to.Contributions = snapshotContributions(reg)
			return
		}
		var re *contribution.RegistryError
		if !errors.As(err, &re) {
			p.Problems = append(p.Problems, err.Error())
			return
		}
		out := contribution.Isolate(re.Problems, func(name string) bool {
			pkg := to.pkg(name)
			return pkg != nil && !pkg.Required
		})
		if len(out) == 0 {
			for _, pr := range re.Problems {
				if pr.Severity == contribution.Error {
					p.Problems = append(p.Problems, pr.Message)
				}
			}
			return
		}
		p.leaveOut(to, cl, out, gone)
	}
}

// contribution is c as the registry takes it: a payload rebuilt from its
// key (a snapshot keeps no payload; a UI action's title is its ID, a
// host kind's payload empty).
func (c SnapshotContribution) contribution() contribution.Contribution {
	src := contribution.PluginSource(c.Plugin, "", c.Origin)
	local := strings.TrimPrefix(c.Key, contribution.ProviderID(c.Plugin, ""))
	switch c.Kind {
	case contribution.KindInterceptor:
		return contribution.NewInterceptor(src, contribution.Point(c.Key), c.Priority, c.Seq)
	case contribution.KindStrategy:
		return contribution.NewStrategy(src, contribution.Slot(c.Key), c.Seq)
	case contribution.KindProvider:
		return contribution.NewProvider(src, contribution.Provider{Ref: local}, c.Seq)
	case contribution.KindAction:
		return contribution.NewAction(src, contribution.Action{ID: local, Title: local}, c.Seq)
	}
	return contribution.Contribution{Kind: c.Kind, Key: c.Key, Source: src, Priority: c.Priority, Seq: c.Seq,
		Payload: contribution.Custom{}}
}

// snapshotContributions lists what reg publishes, in registry order, as a
// snapshot records it.
func snapshotContributions(reg *contribution.Registry) []SnapshotContribution {
	all := reg.All()
	out := make([]SnapshotContribution, 0, len(all))
	for _, c := range all {
		out = append(out, SnapshotContribution{Kind: c.Kind, Key: c.Key, Plugin: c.Source.Plugin,
			Origin: c.Source.Origin, Priority: c.Priority, Seq: c.Seq})
	}
	return out
}
