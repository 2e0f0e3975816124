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
			cfg, err := g.configWithHome()
			if err != nil {
				return err
			}
			for _, name := range args {
				if err := op(cfg.Home, name); err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "%s: %s\n", name, past)
			}
			return nil
		},
	}
}

// newPinCmd builds `kernelctl pin NAME [SHA256]`: pin the package's runtime
// executable to a checksum (by default, the one it has now); an empty
// --clear unpins.
func newPinCmd(g *globals) *cobra.Command {
	var clear bool
	cmd := &cobra.Command{
		Use:   "pin NAME [SHA256]",
		Short: "Pin a package's executable checksum",
		Long: `Pin a package's runtime executable to a sha256 checksum, recorded in the home's
state file: the kernel verifies it before every start and refuses to start a
changed executable. Without SHA256 the executable's current checksum is pinned.
--clear removes the pin.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(_ *cobra.Command, args []string) error {
			inst, err := g.loadInstalled()
			if err != nil {
				return err
			}
			name, sum := args[0], ""
			if len(args) == 2 {
				sum = args[1]
			}
			if !clear && sum == "" {
				if sum, err = currentChecksum(inst, name); err != nil {
					return err
				}
			}
			if err := pluginpkg.Pin(inst.Home, name, sum); err != nil {
				return err
			}
			if sum == "" {
				fmt.Fprintf(g.stdout, "%s: unpinned\n", name)
			} else {
				fmt.Fprintf(g.stdout, "%s: pinned to sha256 %s\n", name, sum)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&clear, "clear", false, "remove the pin")
	return cmd
}

// currentChecksum hashes the named package's runtime executable.
func currentChecksum(inst *pluginpkg.Installed, name string) (string, error) {
	for _, p := range inst.Packages {
		if p.Name != name {
			continue
		}
		path, err := p.CommandPath()
		if err != nil {
			return "", err
		}
		return pluginpkg.ExecutableSHA256(path)
	}
	return "", fmt.Errorf("package %q: %w", name, pluginpkg.ErrNotInstalled)
}
