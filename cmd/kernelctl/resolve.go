package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/capability"
)

// resolveOutput is the --json schema of `kernelctl resolve` (docs/cli.md).
type resolveOutput struct {
	Home      string              `json:"home"`
	Roots     []string            `json:"roots"`
	Members   []string            `json:"members"`
	Choices   []choiceJSON        `json:"choices"`
	DependsOn map[string][]string `json:"depends_on"`
	Problems  []resolveProblem    `json:"problems"`
	Warnings  []warningJSON       `json:"load_warnings"`
}

type choiceJSON struct {
	Package    string `json:"package"`
	Capability string `json:"capability"`
	Constraint string `json:"constraint"`
	Optional   bool   `json:"optional"`
	Provider   string `json:"provider"`
	Version    string `json:"version"`
	Candidates int    `json:"candidates"`
}

type resolveProblem struct {
	Severity string   `json:"severity"`
	Kind     string   `json:"kind"`
	Package  string   `json:"package,omitempty"`
	Cycle    []string `json:"cycle,omitempty"`
	Message  string   `json:"message"`
}

func newResolveCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "resolve [NAME...]",
		Example: `  kernelctl resolve --config kernel.json
  kernelctl resolve --config kernel.json memory`,
		Short: "Explain the capability closure",
		Long: `Resolve the capability closure of the named packages (default: every enabled
package) and print its members, the provider chosen for every requirement, and
an explanation for every problem. Host-provided capabilities come from --config.
The exit code is 1 if any required capability cannot be satisfied.`,
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, err := g.config()
			if err != nil {
				return err
			}
			inst, err := g.loadInstalled()
			if err != nil {
				return err
			}
			cl, err := capability.Resolve(inst.CapabilityRequest(cfg.Capabilities, args))
			if err != nil {
				return err
			}
			out := toResolveOutput(inst.Home, args, cl)
			out.Warnings = toWarnings(inst.Warnings)
			if g.json {
				err = g.printJSON(out)
			} else {
				printResolve(g, out)
			}
			if err != nil {
				return err
			}
			if cl.Err() != nil {
				return failed
			}
			return nil
		},
	}
}

func toResolveOutput(home string, roots []string, cl *capability.Closure) resolveOutput {
	out := resolveOutput{Home: home, Roots: append([]string{}, roots...), Members: append([]string{}, cl.Members...),
		Choices: []choiceJSON{}, DependsOn: map[string][]string{}, Problems: []resolveProblem{}}
	for _, c := range cl.Choices {
		out.Choices = append(out.Choices, choiceJSON{Package: c.Package, Capability: string(c.Requirement.Key),
			Constraint: c.Requirement.Constraint.String(), Optional: c.Requirement.Optional,
			Provider: c.Provider, Version: c.Version.String(), Candidates: c.Candidates})
	}
	for _, m := range cl.Members {
		out.DependsOn[m] = append([]string{}, cl.DependsOn[m]...)
	}
	for _, p := range cl.Problems {
		out.Problems = append(out.Problems, resolveProblem{Severity: p.Severity.String(), Kind: p.Kind.String(),
			Package: p.Package, Cycle: p.Cycle, Message: p.Message})
	}
	return out
}

func printResolve(g *globals, out resolveOutput) {
	w := g.stdout
	fmt.Fprintf(w, "closure: %d %s: %s\n", len(out.Members), plural(len(out.Members), "package", "packages"),
		orDash(strings.Join(out.Members, ", ")))
	if len(out.Choices) > 0 {
		fmt.Fprintln(w, "\nchoices:")
	}
	for _, c := range out.Choices {
		opt := ""
		if c.Optional {
			opt = " (optional)"
		}
		note := ""
		if c.Candidates > 1 {
			note = fmt.Sprintf(" [chosen from %d candidates]", c.Candidates)
		}
		provider := c.Provider
		if provider == capability.HostProvider {
			provider = "the host"
		}
		fmt.Fprintf(w, "  %s requires %s %s%s -> %s (%s %s)%s\n", c.Package, c.Capability, c.Constraint, opt,
			provider, c.Capability, c.Version, note)
	}
	var errs, warns []resolveProblem
	for _, p := range out.Problems {
		if p.Severity == capability.Error.String() {
			errs = append(errs, p)
		} else {
			warns = append(warns, p)
		}
	}
	printProblems(g, "error", "errors", errs)
	printProblems(g, "warning", "warnings", warns)
	printWarnings(g, out.Warnings)
}

func printProblems(g *globals, one, many string, ps []resolveProblem) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(g.stdout, "\n%d %s:\n", len(ps), plural(len(ps), one, many))
	for _, p := range ps {
		fmt.Fprintf(g.stdout, "  %s\n", p.Message)
	}
}
