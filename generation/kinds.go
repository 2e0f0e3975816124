package generation

import (
	"slices"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/semverstr"
	"github.com/extkernel/extkernel/protocol"
)

// Contributions converts one plugin's handshake declarations into
// contributions with origin handshake. An interceptor, or a contribution of
// a host kind, without its own priority takes the manifest's
// runtime.priority; Seq is the declaration index within each kind (within
// the contributions of host kinds, all kinds together). A contribution of
// a host kind has a contribution.Custom payload and the key it declared.
func Contributions(m *Member, d *protocol.InitializeResult) []contribution.Contribution {
	if d == nil {
		return nil
	}
	p := m.Package
	src := contribution.PluginSource(p.Name, semverstr.String(p.Manifest.Version), contribution.OriginHandshake)
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
	return append(out, customContributions(src, base, d.Contributions)...)
}

// customContributions converts a handshake's contributions of host kinds
// (protocol 1.1) into contributions with a Custom payload, from src. A
// contribution without its own priority takes base, the manifest's
// runtime.priority; Seq is the declaration index.
func customContributions(src contribution.Source, base int, ds []protocol.ContributionDecl) []contribution.Contribution {
	out := make([]contribution.Contribution, 0, len(ds))
	for i, d := range ds {
		prio := base
		if d.Priority != nil {
			prio = *d.Priority
		}
		out = append(out, contribution.Contribution{Kind: contribution.Kind(d.Kind), Key: d.Key, Source: src,
			Priority: prio, Seq: i, Payload: contribution.Custom{Title: d.Title, Data: string(d.Data)}})
	}
	return out
}

// kindFields renders the host kinds among specs, "kind/policy/target"
// each, sorted, for the input hash; none when the host declares none, so
// that such a host's hashes are the ones earlier versions computed.
func kindFields(specs []contribution.KindSpec) []string {
	var out []string
	for _, k := range specs {
		if !k.Kind.Builtin() {
			out = append(out, string(k.Kind)+"/"+k.Policy.String()+"/"+k.Target.String())
		}
	}
	slices.Sort(out)
	return out
}
