package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
)

// hostName names the host where a contribution's source is the host itself.
const hostName = "(host)"

// runOutput is the --json schema of `kernelctl run --once` (docs/cli.md).
type runOutput struct {
	Home          string            `json:"home"`
	Generation    uint64            `json:"generation"`
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

// toRunOutput describes a published generation; every list is sorted.
func toRunOutput(home string, g *generation.Generation) runOutput {
	out := runOutput{Home: home, Generation: g.Number(), Members: []memberJSON{}, Warnings: g.Warnings()}
	if out.Warnings == nil {
		out.Warnings = []string{}
	}
	for _, m := range g.Members() {
		out.Members = append(out.Members, memberJSON{Name: m.Package.Name, Version: m.Package.Manifest.Version.String(),
			Status: string(m.Status), Required: m.Required, Reason: m.Reason, Elapsed: m.Elapsed.String()})
	}
	out.Contributions = toContributions(g.Registry())
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

// memberCounts says "5 members (4 running, 1 declarative)".
func memberCounts(ms []memberJSON) string {
	counts := map[string]int{}
	for _, m := range ms {
		counts[m.Status]++
	}
	var parts []string
	for _, s := range []generation.MemberStatus{generation.StatusRunning, generation.StatusDeclarative, generation.StatusFailed} {
		if n := counts[string(s)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
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
