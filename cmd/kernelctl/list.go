package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/pluginpkg"
)

// listOutput is the --json schema of `kernelctl list` (docs/cli.md).
type listOutput struct {
	Home     string        `json:"home"`
	Packages []listPackage `json:"packages"`
	Warnings []warningJSON `json:"warnings"`
}

type listPackage struct {
	Name        string           `json:"name"`
	Version     string           `json:"version"`
	Enabled     bool             `json:"enabled"`
	Runtime     string           `json:"runtime,omitempty"`
	Declarative bool             `json:"declarative"`
	Pin         string           `json:"pin,omitempty"`
	Provides    []capabilityJSON `json:"provides"`
	Requires    []requireJSON    `json:"requires"`
}

type capabilityJSON struct {
	Capability string `json:"capability"`
	Version    string `json:"version"`
}

type requireJSON struct {
	Capability string `json:"capability"`
	Version    string `json:"version"`
	Optional   bool   `json:"optional"`
}

type warningJSON struct {
	Package string `json:"package"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

func newListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "list",
		Example: `  kernelctl list --home ~/.extkernel
  kernelctl list --config kernel.json --json`,
		Short: "List installed packages",
		Long:  "List the packages installed in the home: version, enabled, runtime or declarative, provides and requires, and a warning for every package that could not be loaded.",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			inst, err := g.loadInstalled()
			if err != nil {
				return err
			}
			out := toListOutput(inst)
			if g.json {
				return g.printJSON(out)
			}
			printList(g, out)
			return nil
		},
	}
}

// loadInstalled reads the home chosen by the flags and config.
func (g *globals) loadInstalled() (*pluginpkg.Installed, error) {
	cfg, err := g.configWithHome()
	if err != nil {
		return nil, err
	}
	return pluginpkg.LoadInstalled(cfg.Home)
}

func toListOutput(inst *pluginpkg.Installed) listOutput {
	out := listOutput{Home: inst.Home, Packages: []listPackage{}, Warnings: toWarnings(inst.Warnings)}
	for _, p := range inst.Packages {
		m := p.Manifest
		lp := listPackage{Name: p.Name, Version: m.Version.String(), Enabled: p.Enabled, Pin: p.Pin,
			Declarative: m.Runtime == nil, Provides: []capabilityJSON{}, Requires: []requireJSON{}}
		if m.Runtime != nil {
			lp.Runtime = m.Runtime.Command
		}
		for _, pr := range m.Provides {
			lp.Provides = append(lp.Provides, capabilityJSON{string(pr.Key), pr.Version.String()})
		}
		for _, r := range m.Requires {
			lp.Requires = append(lp.Requires, requireJSON{string(r.Key), r.Constraint.String(), r.Optional})
		}
		out.Packages = append(out.Packages, lp)
	}
	return out
}

func toWarnings(ws []pluginpkg.Warning) []warningJSON {
	out := []warningJSON{}
	for _, w := range ws {
		out = append(out, warningJSON{w.Package, w.Path, w.Message})
	}
	return out
}

func printList(g *globals, out listOutput) {
	tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tENABLED\tRUNTIME\tPROVIDES\tREQUIRES")
	for _, p := range out.Packages {
		runtime := p.Runtime
		if p.Declarative {
			runtime = "(declarative)"
		}
		var provides, requires []string
		for _, c := range p.Provides {
			provides = append(provides, c.Capability+" "+c.Version)
		}
		for _, r := range p.Requires {
			s := r.Capability + " " + r.Version
			if r.Optional {
				s += " (optional)"
			}
			requires = append(requires, s)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Version, yesNo(p.Enabled), runtime,
			orDash(strings.Join(provides, ", ")), orDash(strings.Join(requires, ", ")))
	}
	tw.Flush()
	printWarnings(g, out.Warnings)
}

// printWarnings prints the problems found while loading the home.
func printWarnings(g *globals, ws []warningJSON) {
	if len(ws) == 0 {
		return
	}
	fmt.Fprintf(g.stdout, "\n%d %s:\n", len(ws), plural(len(ws), "load warning", "load warnings"))
	for _, w := range ws {
		for _, line := range strings.Split(w.Message, "\n") {
			fmt.Fprintf(g.stdout, "  %s: %s\n", w.Path, line)
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
