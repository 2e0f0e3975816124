package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/admin"
)

func newDescribeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "describe [TARGET]",
		Short: "List what the running kernel can call, with input schemas",
		Long: `List every contribution 'kernelctl call' can call in the kernel running
on the home (GET /v1/contributions, docs/admin.md): interception points,
strategy slots, providers, actions and the contributions of the kinds the
host declares, each as KIND TARGET (the arguments of 'kernelctl call'),
with its plugin and what it declared. TARGET, a plugin name or a call
target, shows those in full: title, description, priority, and the input
and output schemas where the plugin declared them (a provider's schema; a
host kind's data.input_schema and data.output_schema). --json prints the
admin API's answer. Exit 1 when TARGET matches nothing.`,
		Example: `  kernelctl describe --config kernel.json
  kernelctl describe plugin/kvstore/get --config kernel.json
  kernelctl describe redactor --json`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeDescribe(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withKernel(cmd, false, func(ctx context.Context, c *admin.Client) error {
				a, err := c.Contributions(ctx, "")
				if err != nil {
					return adminFailure("describe", err)
				}
				if len(args) == 1 {
					a.Contributions = selectCallables(a.Contributions, args[0])
					if len(a.Contributions) == 0 {
						return &exitError{code: exitFailed, err: fmt.Errorf("describe: %q is no plugin and no call target in generation %d", args[0], a.Generation)}
					}
				}
				if g.json {
					return g.printJSON(a)
				}
				if len(args) == 1 {
					writeCallablesLong(g, a.Contributions)
				} else {
					writeCallables(g, a)
				}
				return nil
			})
		},
	}
}

// selectCallables keeps the contributions of plugin target, or at call
// target target.
func selectCallables(all []admin.Callable, target string) []admin.Callable {
	var out []admin.Callable
	for _, c := range all {
		if c.Plugin == target || c.Target == target {
			out = append(out, c)
		}
	}
	return out
}

// writeCallables prints one line per contribution: the call's kind and
// target, the plugin, and its title or description.
func writeCallables(g *globals, a *admin.ContributionsAnswer) {
	fmt.Fprintf(g.stdout, "generation %d: %d callable\n\n", a.Generation, len(a.Contributions))
	tw := tabwriter.NewWriter(g.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tTARGET\tPLUGIN\tDESCRIPTION")
	for _, c := range a.Contributions {
		plugin := c.Plugin
		if plugin == "" {
			plugin = "-"
		}
		what := strings.Join(nonEmpty(c.Title, c.Description), ": ")
		if c.Plugin == "" {
			what = "declared by the host; no plugin contributes"
		}
		if c.InputSchema != nil {
			what = strings.TrimSpace(what + " (input schema)")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Call, c.Target, plugin, what)
	}
	tw.Flush()
}

// writeCallablesLong prints each contribution in full, schemas indented.
func writeCallablesLong(g *globals, cs []admin.Callable) {
	for i, c := range cs {
		if i > 0 {
			fmt.Fprintln(g.stdout)
		}
		fmt.Fprintf(g.stdout, "%s %s\n", c.Call, c.Target)
		field := func(name, value string) {
			if value != "" {
				fmt.Fprintf(g.stdout, "  %s: %s\n", name, value)
			}
		}
		field("kind", c.Kind)
		field("plugin", c.Plugin)
		field("title", c.Title)
		field("description", c.Description)
		field("placement", c.Placement)
		if c.Priority != 0 {
			field("priority", fmt.Sprint(c.Priority))
		}
		for _, s := range []struct {
			name string
			raw  []byte
		}{{"input schema", c.InputSchema}, {"output schema", c.OutputSchema}} {
			if s.raw != nil {
				fmt.Fprintf(g.stdout, "  %s:\n    %s\n", s.name, strings.ReplaceAll(jsonIndent(s.raw), "\n", "\n    "))
			}
		}
	}
}

func nonEmpty(ss ...string) []string {
	return slices.DeleteFunc(ss, func(s string) bool { return s == "" })
}

// completionWait bounds how long a completion asks the running kernel.
const completionWait = 2 * time.Second

// runningCallables asks the running kernel for its contributions, nil when
// none runs or it does not answer in time: completion never fails loudly.
func runningCallables(g *globals) []admin.Callable {
	c, err := g.dialKernel()
	if err != nil {
		return nil
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), completionWait)
	defer cancel()
	a, err := c.Contributions(ctx, "")
	if err != nil {
		return nil
	}
	return a.Contributions
}

// completeCall completes `call KIND TARGET`: the built-in kinds and the
// host kinds the running kernel has contributions of, then the targets of
// that kind there.
func completeCall(g *globals) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		switch len(args) {
		case 0: // the built-in kinds in their order, then the host's
			var host []string
			for _, c := range runningCallables(g) {
				if !slices.Contains(callKinds, c.Call) {
					host = append(host, c.Call)
				}
			}
			builtin := slices.DeleteFunc(slices.Clone(callKinds), func(k string) bool { return !strings.HasPrefix(k, toComplete) })
			return append(builtin, prefixed(host, toComplete)...), cobra.ShellCompDirectiveNoFileComp
		case 1:
			for _, c := range runningCallables(g) {
				if c.Call == args[0] {
					out = append(out, c.Target)
				}
			}
		}
		return prefixed(out, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeDescribe completes `describe TARGET`: the running kernel's
// plugins and call targets.
func completeDescribe(g *globals) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, c := range runningCallables(g) {
			out = append(out, c.Target)
			if c.Plugin != "" {
				out = append(out, c.Plugin)
			}
		}
		return prefixed(out, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// prefixed returns the distinct names starting with prefix, sorted.
func prefixed(names []string, prefix string) []string {
	names = slices.DeleteFunc(names, func(n string) bool { return !strings.HasPrefix(n, prefix) })
	slices.Sort(names)
	return slices.Compact(names)
}
