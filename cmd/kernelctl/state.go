package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/pluginpkg"
)

// newStateCmd builds `kernelctl enable NAME...` or `kernelctl disable NAME...`.
func newStateCmd(g *globals, verb string) *cobra.Command {
	op, past := pluginpkg.Enable, "enabled"
	if verb == "disable" {
		op, past = pluginpkg.Disable, "disabled"
	}
	return &cobra.Command{
		Use:   verb + " NAME...",
		Short: fmt.Sprintf("Mark installed packages %s", past),
		Long:  fmt.Sprintf("Mark installed packages %s in the home's state file (written atomically).", past),
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, err := g.config()
			if err != nil {
				return err
			}
			home, err := g.resolveHome(cfg)
			if err != nil {
				return err
			}
			for _, name := range args {
				if err := op(home, name); err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "%s: %s\n", name, past)
			}
			return nil
		},
	}
}
