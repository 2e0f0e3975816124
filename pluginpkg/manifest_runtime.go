package pluginpkg

import (
	"fmt"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/jsonfile"
)

// runtime walks the "runtime" object.
func (p *manifestParser) runtime(f fieldPath, n *jsonfile.Node) {
	rt := &Runtime{}
	ok := p.object(f, n, []field{
		{name: "command", check: func(f fieldPath, n *jsonfile.Node) {
			if s, ok := p.str(f, n); ok {
				p.rule(f, checkCommand(s))
				rt.DefaultCommand = s
			}
		}},
		{name: "platforms", check: func(f fieldPath, n *jsonfile.Node) { rt.Platforms = p.platforms(f, n) }},
		{name: "args", check: func(f fieldPath, n *jsonfile.Node) {
			args, _ := p.strings(f, n)
			for i, a := range args {
				p.rule(f.index(i), checkText(a))
			}
			rt.Args = args
		}},
		{name: "env", check: func(f fieldPath, n *jsonfile.Node) { rt.Env = p.env(f, n) }},
		{name: "required", check: func(f fieldPath, n *jsonfile.Node) { rt.Required, _ = p.boolean(f, n) }},
		{name: "priority", check: func(f fieldPath, n *jsonfile.Node) {
			v, inRange, ok := p.integer(f, n)
			switch {
			case !ok:
			case !inRange:
				p.add(f, "must be between %d and %d, got %s", contribution.MinPriority, contribution.MaxPriority, n.Text)
			default:
				p.rule(f, checkPriority(v))
				rt.Priority = int(v)
			}
		}},
		{name: "intercepts", check: func(f fieldPath, n *jsonfile.Node) { rt.Intercepts = p.points(f, n) }},
		{name: "replaces", check: func(f fieldPath, n *jsonfile.Node) { rt.Replaces = p.slots(f, n) }},
		{name: "contributes", check: func(f fieldPath, n *jsonfile.Node) { rt.Contributes = p.contributes(f, n) }},
		{name: "activation", check: func(f fieldPath, n *jsonfile.Node) {
			if s, ok := p.str(f, n); ok {
				p.rule(f, checkActivation(s))
				rt.Activation = s
			}
		}},
		{name: "handshake_timeout", check: func(f fieldPath, n *jsonfile.Node) {
			if s, ok := p.str(f, n); ok {
				d, msg := parseTimeout(s)
				p.rule(f, msg)
				rt.HandshakeTimeout = d
			}
		}},
	})
	if !ok {
		return
	}
	if !hasMember(n, "command") && !hasMember(n, "platforms") {
		p.add(f.child("command"), "required field is missing")
	}
	if rt.Platforms == nil {
		rt.Command, rt.DefaultCommand = rt.DefaultCommand, ""
	} else {
		rt.selectCommand()
	}
	p.m.Runtime = rt
}

// hasMember reports whether object n has a member named key.
func hasMember(n *jsonfile.Node, key string) bool {
	for _, m := range n.Members {
		if m.Key == key {
			return true
		}
	}
	return false
}

// env walks runtime.env: an object of string values keyed by valid,
// unreserved environment variable names.
func (p *manifestParser) env(f fieldPath, n *jsonfile.Node) map[string]string {
	if n.Kind != jsonfile.KindObject {
		p.typeError(f, "an object of strings", n)
		return nil
	}
	env := make(map[string]string, len(n.Members))
	for _, m := range n.Members {
		kf := f.child(m.Key)
		if p.badKey(kf, m) || p.duplicate(kf, n, m) {
			continue
		}
		if msg := checkEnvName(m.Key); msg != "" {
			p.add(f, "%s", msg)
			continue
		}
		if s, ok := p.str(kf, m.Val); ok {
			p.rule(kf, checkText(s))
			env[m.Key] = s
		}
	}
	return env
}

// checkActivation checks runtime.activation: "eager" or "lazy".
func checkActivation(s string) string {
	if s == ActivationEager || s == ActivationLazy {
		return ""
	}
	return fmt.Sprintf("must be %q or %q, got %q", ActivationEager, ActivationLazy, s)
}
