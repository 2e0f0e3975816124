package builder

import (
	"context"
	"errors"
	"fmt"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/semverstr"
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
			b.warnings = append(b.warnings, b.versionWarnings()...)
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
			b.markFailed(name, generation.LeftOut(reason))
			b.leftOut[name] = true
		}
		if !b.cascade(ctx) {
			return nil, false
		}
	}
}

// versionWarnings returns a warning for each running member whose
// handshake answered a version other than its manifest's
// (docs/protocol.md §4.2: a SHOULD, so the plugin is kept), in member
// order. The manifest's version is the one the kernel reports.
func (b *build) versionWarnings() []string {
	var out []string
	for _, name := range b.closure.Members {
		d, m := b.declarations(name), b.members[name]
		if d == nil || m == nil || b.fromManifest(name) {
			continue
		}
		if want := semverstr.String(m.Package.Manifest.Version); d.Version != want {
			out = append(out, fmt.Sprintf("plugin %q: its handshake says version %q, its manifest %q (the manifest's is the one reported)", name, d.Version, want))
		}
	}
	return out
}

// buildRegistry builds the registry from the members that run.
func (b *build) buildRegistry() (*contribution.Registry, error) {
	lists := make([][]contribution.Contribution, 0, len(b.closure.Members))
	n := 0
	for _, name := range b.closure.Members {
		var cs []contribution.Contribution
		if z := b.lazy[name]; z != nil && z.memo != nil { // published from its manifest: z.declared is z.memo.decl
			cs = z.memo.contributions(b.members[name])
		} else if d := b.declarations(name); d != nil {
			cs = generation.Contributions(b.members[name], d)
		}
		lists, n = append(lists, cs), n+len(cs)
	}
	bld := contribution.NewBuilder(b.in.Spec)
	bld.Grow(n)
	for _, cs := range lists {
		bld.Add(cs...)
	}
	return bld.Build()
}

// isolate decides, from a failed registry build's problems, which optional
// plugins to leave out, each with its reason: contribution.Isolate, the
// rule a plan applies too, with the members that run and are not
// required as the optional ones. It returns nothing, failing the build,
// when a problem cannot be pinned on an optional plugin.
func (b *build) isolate(problems []contribution.Problem) map[string]string {
	return contribution.Isolate(problems, func(name string) bool {
		m := b.members[name]
		return m != nil && !m.Required && b.declarations(name) != nil
	})
}

// failureWarning is the warning of an optional member that does not run.
func (b *build) failureWarning(name string) string {
	if b.leftOut[name] {
		return fmt.Sprintf("optional plugin %q is %s", name, b.members[name].Reason)
	}
	return fmt.Sprintf("optional plugin %q failed: %s", name, b.members[name].Reason)
}
