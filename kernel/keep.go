package kernel

import (
	"slices"
	"strings"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/pluginpkg"
)

// keepBroken carries over every optional plugin that runs in prev (whose
// snapshot is from) and whose manifest no longer loads, though its package
// is still installed and not disabled: a typo or an editor's non-atomic
// save does not take a running plugin out, only disable and remove do. Each
// one's package value in prev goes back into in.Installed, and in.Kept
// names it with its load problems (each "path: field: message"), so that
// the plan classifies it as unchanged and the build adopts its sidecar (or
// its lazy slot); the caller computes the launch values again. prev is nil for a plan from a snapshot alone: then
// in.Kept is filled and the plan still says unchanged, but nothing is put
// back in in.Installed.
//
// A required member of from, or a package the host expects (a required
// policy in its config: in.Expect), is not kept: a reload fails on it
// and rolls back, as before, with the current generation serving.
func keepBroken(in *generation.Inputs, from *generation.Snapshot, prev *generation.Generation) {
	problems := map[string][]string{}
	disabled := map[string]bool{}
	for _, w := range in.Installed.Warnings {
		if w.Path == pluginpkg.StateFile {
			continue // a state entry of a package that is not installed
		}
		problems[w.Package] = append(problems[w.Package], w.String())
		disabled[w.Package] = disabled[w.Package] || w.Disabled
	}
	var add []*pluginpkg.Package
	for _, sp := range from.Packages {
		switch {
		case problems[sp.Name] == nil, disabled[sp.Name], sp.Required, expected(in, sp.Name),
			sp.Status != generation.StatusRunning && sp.Status != generation.StatusDeclared:
			continue
		}
		if prev != nil {
			m := prev.Member(sp.Name)
			if m == nil {
				continue
			}
			p := *m.Package
			p.Enabled = true
			add = append(add, &p)
		}
		if in.Kept == nil {
			in.Kept = map[string]string{}
		}
		in.Kept[sp.Name] = strings.Join(problems[sp.Name], "; ")
	}
	if len(add) == 0 {
		return
	}
	inst := *in.Installed
	inst.Packages = append(slices.Clone(inst.Packages), add...)
	slices.SortFunc(inst.Packages, func(a, b *pluginpkg.Package) int { return strings.Compare(a.Name, b.Name) })
	in.Installed = &inst
}

// expected reports whether in.Expect names the package.
func expected(in *generation.Inputs, name string) bool {
	return slices.ContainsFunc(in.Expect, func(x generation.Expected) bool { return x.Name == name })
}
