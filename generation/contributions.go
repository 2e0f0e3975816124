package generation

import (
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/protocol"
)

// registry turns every running member's handshake declarations into
// contributions and builds the validated snapshot.
func (b *build) registry() (*contribution.Registry, bool) {
	bld := contribution.NewBuilder(b.in.Spec)
	for _, name := range b.closure.Members {
		m := b.members[name]
		if m.client == nil {
			continue
		}
		bld.Add(Contributions(m, m.client.Declarations())...)
	}
	reg, err := bld.Build()
	if err != nil {
		b.errs = append(b.errs, err)
		b.problems = append(b.problems, err.Error())
		return nil, false
	}
	for _, w := range reg.Warnings() {
		b.warnings = append(b.warnings, w.Message)
	}
	return reg, true
}

// Contributions converts one plugin's handshake declarations into
// contributions with origin handshake. An interceptor without its own
// priority takes the manifest's runtime.priority; Seq is the declaration
// index within each kind.
func Contributions(m *Member, d *protocol.InitializeResult) []contribution.Contribution {
	if d == nil {
		return nil
	}
	p := m.Package
	src := contribution.PluginSource(p.Name, p.Manifest.Version.String(), contribution.OriginHandshake)
	base := 0
	if p.Manifest.Runtime != nil {
		base = p.Manifest.Runtime.Priority
	}
	var out []contribution.Contribution
	for i, ic := range d.Interceptors {
		prio := base
		if ic.Priority != nil {
			prio = *ic.Priority
		}
		out = append(out, contribution.NewInterceptor(src, contribution.Point(ic.Point), prio, i))
	}
	for i, s := range d.Strategies {
		out = append(out, contribution.NewStrategy(src, contribution.Slot(s.Slot), i))
	}
	for i, pr := range d.Providers {
		out = append(out, contribution.NewProvider(src, contribution.Provider{Ref: pr.Ref, Description: pr.Description,
			Schema: string(pr.Schema)}, i))
	}
	for i, a := range d.Actions {
		out = append(out, contribution.NewAction(src, contribution.Action{ID: a.ID, Title: a.Title, Placement: a.Placement}, i))
	}
	return out
}
