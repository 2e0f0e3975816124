package main

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// completePackages completes the names of the home's installed packages,
// for the first max arguments (0: every argument), leaving out names
// already given.
func completePackages(g *globals, max int) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if max > 0 && len(args) >= max {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		inst, err := g.loadInstalled()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		var names []string
		for _, p := range inst.Packages {
			if strings.HasPrefix(p.Name, toComplete) && !slices.Contains(args, p.Name) {
				names = append(names, p.Name)
			}
		}
		slices.Sort(names)
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// packageArgs are the commands whose arguments are package names, and how
// many: their completion is set when the tree is built (root.go).
var packageArgs = map[string]int{"enable": 0, "disable": 0, "pin": 1, "accept-permissions": 1}

// completeMembers completes the first argument with the members of the
// running kernel's generation, or, when none runs, the home's installed
// packages (completePackages).
func completeMembers(g *globals) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	installed := completePackages(g, 1)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := g.dialKernel()
		if err != nil {
			return installed(cmd, args, toComplete)
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), completionWait)
		defer cancel()
		a, err := c.Plugins(ctx)
		if err != nil {
			return installed(cmd, args, toComplete)
		}
		var names []string
		for _, m := range a.Plugins {
			names = append(names, m.Name)
		}
		return prefixed(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}
