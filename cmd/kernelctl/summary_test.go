package main

import (
	"bytes"
	"testing"

	"github.com/extkernel/extkernel/contribution"
)

// TestWriteSummary covers what the demo home does not: a chain of several
// interceptors with the host in it, a point nobody intercepts, an unclaimed
// slot, a failed optional member, and calls to a host capability kernelctl
// does not implement, to a failed provider and to a provider that maps no
// methods.
func TestWriteSummary(t *testing.T) {
	b := contribution.NewBuilder(contribution.HostSpec{
		Points: []contribution.Point{"tool.before", "prompt.submit"},
		Slots:  []contribution.Slot{"context.compactor", "tools.router"},
	})
	src := func(name string) contribution.Source {
		return contribution.PluginSource(name, "1.0.0", contribution.OriginHandshake)
	}
	b.Add(
		contribution.NewInterceptor(src("audit"), "tool.before", -10, 0),
		contribution.NewInterceptor(src("redactor"), "tool.before", 100, 0),
		contribution.NewInterceptor(contribution.HostSource(), "tool.before", 0, 0),
		contribution.NewStrategy(src("memory"), "context.compactor", 0),
		contribution.NewProvider(src("kvstore"), contribution.Provider{Ref: "get", Description: "Returns a value."}, 0),
		contribution.NewProvider(src("kvstore"), contribution.Provider{Ref: "del"}, 1),
		contribution.NewAction(src("memory"), contribution.Action{ID: "forget", Title: "Forget", Placement: "palette"}, 0),
	)
	reg, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	out := runOutput{Generation: 3, Contributions: toContributions(reg), Warnings: []string{"one\ntwo"},
		Members: []memberJSON{
			{Name: "audit", Version: "1.0.0", Status: "failed", Reason: "exited"},
			{Name: "redactor", Version: "1.2.0", Status: "running", Required: true, Calls: []callJSON{
				{Capability: "host.fs", Constraint: "^1.0", Provider: "(host)", Available: false, Reason: "kernelctl does not implement it"},
				{Capability: "host.log", Constraint: "*", Provider: "(host)", Available: true},
				{Capability: "metrics.sink", Constraint: "^1.0", Optional: true, Provider: "audit", Methods: []string{"send"},
					Available: false, Reason: "the provider is failed"},
				{Capability: "ui.theme", Constraint: "^1.0", Optional: true, Provider: "themes", Available: true},
			}},
			{Name: "themes", Version: "1.0.0", Status: "declarative"},
		}}
	var got bytes.Buffer
	writeSummary(&got, out)
	want := `
generation 3: 3 members (1 running, 1 declarative, 1 failed)

interceptors:
  prompt.submit: (none)
  tool.before: redactor (priority 100) -> (host) (priority 0) -> audit (priority -10)

slots:
  context.compactor: memory
  tools.router: (host default)

providers:
  plugin/kvstore/del — (none)
  plugin/kvstore/get — Returns a value.

actions:
  plugin/memory/forget  "Forget"  palette  memory

members:
  audit     1.0.0  failed (optional): exited
  redactor  1.2.0  running (required)
  themes    1.0.0  declarative

calls:
  redactor  host.fs ^1.0                  host: not available: kernelctl does not implement it
  redactor  host.log *                    host
  redactor  metrics.sink ^1.0 (optional)  plugin audit: not available: the provider is failed
  redactor  ui.theme ^1.0 (optional)      plugin themes: maps no methods

1 warning:
  one
    two
`
	if got.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got.String(), want)
	}
}
