package generation

import (
	"slices"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/protocol"
)

// hostKinds returns the kinds of specs (a host spec's Kinds) that are not
// built in, sorted: the kinds whose contributions a handshake may declare
// in its contributions. Nil specs, the built-in kinds only, give none.
func hostKinds(specs []contribution.KindSpec) []string {
	var out []string
	for _, k := range specs {
		if !builtinKind(k.Kind) && !slices.Contains(out, string(k.Kind)) {
			out = append(out, string(k.Kind))
		}
	}
	slices.Sort(out)
	return out
}

// builtinKind reports whether k is one of the four built-in kinds.
func builtinKind(k contribution.Kind) bool {
	switch k {
	case contribution.KindInterceptor, contribution.KindStrategy, contribution.KindProvider, contribution.KindAction:
		return true
	}
	return false
}

// contributes is a manifest's runtime.contributes as the sidecar reads it.
func contributes(in map[contribution.Kind][]string) map[string][]string {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string][]string, len(in))
	for k, keys := range in {
		out[string(k)] = keys
	}
	return out
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
		if !builtinKind(k.Kind) {
			out = append(out, string(k.Kind)+"/"+k.Policy.String()+"/"+k.Target.String())
		}
	}
	slices.Sort(out)
	return out
}
