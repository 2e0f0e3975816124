package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
)

// hostName names the host where a contribution's source is the host itself.
const hostName = "(host)"

// runOutput is the --json schema of `kernelctl run --once` (docs/cli.md).
type runOutput struct {
	Home          string            `json:"home"`
	Generation    uint64            `json:"generation"`
	Hash          string            `json:"hash"`
	Members       []memberJSON      `json:"members"`
	Contributions contributionsJSON `json:"contributions"`
	Warnings      []string          `json:"warnings"`
}

type memberJSON struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Status   string `json:"status"`
	Required bool   `json:"required"`
	Reason   string `json:"reason,omitempty"`
	// Elapsed is the start time as a Go duration ("12.5ms"); "0s" when
	// nothing was started.
	Elapsed string `json:"elapsed"`
	// Calls are the capabilities the member may call, by capability.
	Calls []callJSON `json:"calls"`
}

// callJSON is one capability a member may call (its manifest requires
// it, docs/protocol.md §5.11) and who serves the calls, as the kernel
// routes them (capability.Route).
type callJSON struct {
	Capability string `json:"capability"`
	Constraint string `json:"constraint"`
	Optional   bool   `json:"optional"`
	// Provider is the member serving the calls, "(host)" for the host, or
	// "" for none.
	Provider string `json:"provider"`
	// Methods are the methods a plugin provider maps to its providers
	// (provides[].methods); [] for the host, whose handler decides.
	Methods []string `json:"methods"`
	// Available is false when every call is answered -32006 (not
	// available); Reason then says why.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
}

type contributionsJSON struct {
	Interceptors []pointJSON    `json:"interceptors"`
	Slots        []slotJSON     `json:"slots"`
	Providers    []providerJSON `json:"providers"`
	Actions      []actionJSON   `json:"actions"`
}

type pointJSON struct {
	Point string      `json:"point"`
	Chain []chainJSON `json:"chain"`
}

type chainJSON struct {
	Plugin   string `json:"plugin"`
	Priority int    `json:"priority"`
}

type slotJSON struct {
	Slot string `json:"slot"`
	// Owner is nil when no plugin claims the slot: the host's default runs.
	Owner *string `json:"owner"`
}

type providerJSON struct {
	ID          string `json:"id"`
	Plugin      string `json:"plugin"`
	Description string `json:"description"`
}

type actionJSON struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Placement string `json:"placement"`
	Plugin    string `json:"plugin"`
}

// toRunOutput describes a published generation, with its routes
// (kernel.Routes); every list is sorted.
func toRunOutput(home string, g *generation.Generation, routes []capability.Route) runOutput {
	out := runOutput{Home: home, Generation: g.Number(), Hash: g.Hash(), Members: []memberJSON{}, Warnings: g.Warnings()}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	calls := toCalls(g, routes)
	for _, m := range g.Members() {
		mc := calls[m.Package.Name]
		if mc == nil {
			mc = []callJSON{}
		}
		out.Members = append(out.Members, memberJSON{Name: m.Package.Name, Version: m.Package.Manifest.Version.String(),
			Status: string(m.Status), Required: m.Required, Reason: m.Reason, Elapsed: m.Elapsed.String(), Calls: mc})
	}
	out.Contributions = toContributions(g.Registry())
	return out
}

// toCalls describes the routes of g by calling member, in the order of
// routes (by capability).
func toCalls(g *generation.Generation, routes []capability.Route) map[string][]callJSON {
	out := map[string][]callJSON{}
	for _, r := range routes {
		c := callJSON{Capability: string(r.Requirement.Key), Constraint: "*", Optional: r.Requirement.Optional,
			Provider: r.Provider, Methods: r.Methods, Available: true}
		if r.Requirement.Constraint != nil {
			c.Constraint = r.Requirement.Constraint.String()
		}
		if c.Methods == nil {
			c.Methods = []string{}
		}
		switch p := g.Member(r.Provider); {
		case r.Provider == "":
			c.Available, c.Reason = false, "optional, unsatisfied"
		case r.Provider == capability.HostProvider && !r.Handled:
			c.Available, c.Reason = false, "kernelctl does not implement it"
		case p != nil && p.Status != generation.StatusRunning:
			c.Available, c.Reason = false, fmt.Sprintf("the provider is %s", p.Status)
		}
		out[r.Plugin] = append(out[r.Plugin], c)
	}
	return out
}

func toContributions(r *contribution.Registry) contributionsJSON {
	out := contributionsJSON{Interceptors: []pointJSON{}, Slots: []slotJSON{}, Providers: []providerJSON{}, Actions: []actionJSON{}}
	for _, p := range keysOf(r, contribution.KindInterceptor, r.Points()) {
		pj := pointJSON{Point: p, Chain: []chainJSON{}}
		for _, c := range r.Interceptors(contribution.Point(p)) {
			pj.Chain = append(pj.Chain, chainJSON{Plugin: contributor(c), Priority: c.Priority})
		}
		out.Interceptors = append(out.Interceptors, pj)
	}
	for _, s := range keysOf(r, contribution.KindStrategy, r.Slots()) {
		sj := slotJSON{Slot: s}
		if c, ok := r.SlotOwner(contribution.Slot(s)); ok {
			owner := contributor(c)
			sj.Owner = &owner
		}
		out.Slots = append(out.Slots, sj)
	}
	for _, c := range r.OfKind(contribution.KindProvider) {
		p, _ := c.Payload.(contribution.Provider)
		out.Providers = append(out.Providers, providerJSON{ID: c.Key, Plugin: contributor(c), Description: p.Description})
	}
	for _, c := range r.Actions() {
		a, _ := c.Payload.(contribution.Action)
		out.Actions = append(out.Actions, actionJSON{ID: c.Key, Title: a.Title, Placement: a.Placement, Plugin: contributor(c)})
	}
	return out
}

// keysOf returns the declared keys and every key a contribution of kind k
// uses, sorted and without duplicates.
func keysOf[K ~string](r *contribution.Registry, k contribution.Kind, declared []K) []string {
	set := map[string]bool{}
	for _, d := range declared {
		set[string(d)] = true
	}
	for _, c := range r.OfKind(k) {
		set[c.Key] = true
	}
	return slices.Sorted(maps.Keys(set))
}

func contributor(c contribution.Contribution) string {
	if c.Source.Scope == contribution.ScopeHost {
		return hostName
	}
	return c.Source.Plugin
}

// writeSummary prints a published generation the way `run` shows it.
func writeSummary(w io.Writer, out runOutput) {
	fmt.Fprintf(w, "\ngeneration %d: %s\n", out.Generation, memberCounts(out.Members))
	c := out.Contributions
	section(w, "interceptors", len(c.Interceptors), func() {
		for _, p := range c.Interceptors {
			links := make([]string, len(p.Chain))
			for i, l := range p.Chain {
				links[i] = fmt.Sprintf("%s (priority %d)", l.Plugin, l.Priority)
			}
			fmt.Fprintf(w, "  %s: %s\n", p.Point, orNone(strings.Join(links, " -> ")))
		}
	})
	section(w, "slots", len(c.Slots), func() {
		for _, s := range c.Slots {
			owner := "(host default)"
			if s.Owner != nil {
				owner = *s.Owner
			}
			fmt.Fprintf(w, "  %s: %s\n", s.Slot, owner)
		}
	})
	section(w, "providers", len(c.Providers), func() {
		for _, p := range c.Providers {
			fmt.Fprintf(w, "  %s — %s\n", p.ID, orNone(p.Description))
		}
	})
	section(w, "actions", len(c.Actions), func() {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, a := range c.Actions {
			fmt.Fprintf(tw, "  %s\t%q\t%s\t%s\n", a.ID, a.Title, orDash(a.Placement), a.Plugin)
		}
		tw.Flush()
	})
	writeMembers(w, out.Members)
	writeCalls(w, out.Members)
	if n := len(out.Warnings); n > 0 {
		fmt.Fprintf(w, "\n%d %s:\n", n, plural(n, "warning", "warnings"))
		for _, warn := range out.Warnings {
			fmt.Fprintf(w, "  %s\n", indentLines(warn, "    "))
		}
	}
}

// section prints a heading and its body, or "(none)".
func section(w io.Writer, title string, n int, body func()) {
	fmt.Fprintf(w, "\n%s:\n", title)
	if n == 0 {
		fmt.Fprintln(w, "  (none)")
		return
	}
	body()
}

func writeMembers(w io.Writer, ms []memberJSON) {
	section(w, "members", len(ms), func() {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, m := range ms {
			status := m.Status
			switch {
			case m.Status == string(generation.StatusFailed):
				status = "failed (optional): " + indentLines(m.Reason, "    ")
			case m.Required:
				status += " (required)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", m.Name, m.Version, status)
		}
		tw.Flush()
	})
}

// writeCalls prints, for each member, the capabilities it may call and
// who serves each.
func writeCalls(w io.Writer, ms []memberJSON) {
	n := 0
	for _, m := range ms {
		n += len(m.Calls)
	}
	section(w, "calls", n, func() {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, m := range ms {
			for _, c := range m.Calls {
				req := c.Capability + " " + c.Constraint
				if c.Optional {
					req += " (optional)"
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", m.Name, req, servedBy(c))
			}
		}
		tw.Flush()
	})
}

// servedBy says who serves a member's calls of one capability: "host",
// "plugin kvstore: get, put" (the methods it maps), or why they are not
// available ("not available: optional, unsatisfied", "host: not
// available: ...", "plugin x: not available: ...").
func servedBy(c callJSON) string {
	who := "plugin " + c.Provider
	switch {
	case c.Provider == "":
		return "not available: " + c.Reason
	case c.Provider == capability.HostProvider:
		who = "host"
	}
	switch {
	case !c.Available:
		return who + ": not available: " + c.Reason
	case c.Provider == capability.HostProvider:
		return who
	case len(c.Methods) == 0:
		return who + ": maps no methods"
	}
	return who + ": " + strings.Join(c.Methods, ", ")
}

// memberCounts says "5 members (4 running, 1 declarative)"; lazy members
// not started count as "declared, not started".
func memberCounts(ms []memberJSON) string {
	counts := map[string]int{}
	for _, m := range ms {
		counts[m.Status]++
	}
	var parts []string
	for _, s := range []generation.MemberStatus{generation.StatusRunning, generation.StatusDeclared, generation.StatusDeclarative, generation.StatusFailed} {
		if n := counts[string(s)]; n > 0 {
			word := string(s)
			if s == generation.StatusDeclared {
				word = "declared, not started"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, word))
		}
	}
	s := fmt.Sprintf("%d %s", len(ms), plural(len(ms), "member", "members"))
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// indentLines indents every line of s after the first.
func indentLines(s, indent string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+indent)
}
