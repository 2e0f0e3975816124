package generation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/protocol"
)

// register turns every running member's handshake declarations into
// contributions and builds the validated snapshot. An optional plugin whose
// declarations break a rule is left out (see isolate): it is marked failed,
// the failure cascades along requires edges, the sidecars of every member
// this removed are stopped, and the registry is built again from the rest.
// Each round removes at least one running member, so the loop ends.
func (b *build) register(ctx context.Context) (*contribution.Registry, bool) {
	for {
		reg, err := b.buildRegistry()
		if err == nil {
			for _, w := range reg.Warnings() {
				b.warnings = append(b.warnings, w.Message)
			}
			return reg, true
		}
		var be *contribution.RegistryError
		out := map[string]string{}
		if errors.As(err, &be) {
			out = b.isolate(be.Problems)
		}
		if len(out) == 0 {
			b.errs = append(b.errs, err)
			b.problems = append(b.problems, err.Error())
			return nil, false
		}
		for name, reason := range out {
			b.markFailed(name, leftOutReason(reason))
			b.leftOut[name] = true
		}
		if !b.cascade(ctx) {
			return nil, false
		}
	}
}

// buildRegistry builds the registry from the members that run.
func (b *build) buildRegistry() (*contribution.Registry, error) {
	bld := contribution.NewBuilder(b.in.Spec)
	for _, name := range b.closure.Members {
		m := b.members[name]
		if m.client() == nil {
			continue
		}
		bld.Add(Contributions(m, m.client().Declarations())...)
	}
	return bld.Build()
}

// isolate decides, from a failed registry build's problems, which optional
// plugins to leave out, each with its reason (the broken rules, naming the
// other party of a conflict). It returns nothing, failing the build, when
// any error-severity problem cannot be pinned on an optional plugin: a
// problem of the host spec or of slot_owners, or one whose plugins are all
// required (a required plugin's own violation, or a conflict between
// required plugins). In a conflict between a required and an optional
// plugin the optional one is left out; in a conflict between optional
// plugins, all of them (unless slot_owners names one, in which case the
// registry reports no conflict).
func (b *build) isolate(problems []contribution.Problem) map[string]string {
	out := map[string]string{}
	for _, p := range problems {
		if p.Severity != contribution.Error {
			continue
		}
		if p.Code == contribution.CodeHostSpec || p.Code == contribution.CodeOwnerNotClaiming {
			return nil
		}
		var optional []string
		for _, src := range p.Sources {
			m := b.members[src.Plugin]
			if src.Scope != contribution.ScopePlugin || m == nil || m.Required || m.client() == nil {
				continue
			}
			if !slices.Contains(optional, src.Plugin) {
				optional = append(optional, src.Plugin)
			}
		}
		if len(optional) == 0 {
			return nil
		}
		for _, name := range optional {
			if out[name] != "" {
				out[name] += "; "
			}
			out[name] += p.Message
		}
	}
	return out
}

// leftOutReason is the reason recorded for a plugin left out of the
// generation for breaking a contribution rule.
func leftOutReason(rule string) string {
	return "left out of the generation: " + strings.TrimSuffix(rule, ".")
}

// failureWarning is the warning of an optional member that does not run.
func (b *build) failureWarning(name string) string {
	if b.leftOut[name] {
		return fmt.Sprintf("optional plugin %q is %s", name, b.members[name].Reason)
	}
	return fmt.Sprintf("optional plugin %q failed: %s", name, b.members[name].Reason)
}

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
	return append(out, customContributions(src, base, d.Contributions)...)
}
