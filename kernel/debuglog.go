package kernel

import (
	"github.com/extkernel/extkernel/generation"
)

// The kernel's debug lines (docs/cli.md, "Logs"): what a plan decided for
// each package, what each published generation's members became (started,
// adopted, declared, failed) and when a retired generation is stopped. A
// sidecar logs its own spawn, handshake and, at trace, its frames.

// logPlan logs, at debug, the decision plan made for each package, why a
// build is made (cause: "reload", "restart").
func (k *Kernel) logPlan(cause string, plan *generation.Plan) {
	if !k.log.IsDebug() {
		return
	}
	for _, c := range plan.Packages {
		args := []any{"cause", cause, "plugin", c.Name, "class", c.Class}
		if len(c.Reasons) > 0 {
			args = append(args, "reasons", c.Reasons)
		}
		if c.From != c.To {
			args = append(args, "from", c.From, "to", c.To)
		}
		k.log.Debug("plan", args...)
	}
}

// logMembers logs, at debug, what each member of the generation g became:
// started (with how long it took), adopted from the generation it
// replaces, declared, declarative, or failed (with the reason, redacted).
func (k *Kernel) logMembers(g *generation.Generation) {
	if !k.log.IsDebug() {
		return
	}
	for _, m := range g.Members() {
		args := []any{"generation", g.Number(), "plugin", m.Package.Name, "status", m.Status, "required", m.Required}
		switch {
		case m.Adopted:
			args = append(args, "adopted", true)
		case m.Elapsed > 0:
			args = append(args, "elapsed", m.Elapsed)
		}
		if m.Reason != "" {
			args = append(args, "reason", k.redactText(m.Reason))
		}
		k.log.Debug("member", args...)
	}
}
