package main

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/pluginpkg"
)

// removeOutput is the --json schema of remove (docs/cli.md).
type removeOutput struct {
	Home    string `json:"home"`
	Removed string `json:"removed"`
	// Forced says --force overrode a refusal, whose message is Refused.
	Forced  bool             `json:"forced"`
	Refused string           `json:"refused,omitempty"`
	Plan    *generation.Plan `json:"plan"`
}

func newRemoveCmd(g *globals) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use: "remove NAME",
		Example: `  kernelctl remove hello
  kernelctl remove kvstore --config kernel.json --force`,
		Short: "Uninstall a package",
		Long: `Remove the package, the previous version an upgrade kept, and its state
entry. It is refused when the host config's policy (--config) marks the
package required, or when another enabled package requires a capability that
only this one provides (and the host does not); the message names them.
--force removes it anyway: the plan printed then shows the cascade, the
packages that fail or leave with it. Works on a running kernel's home; its
next reload stops the package. Exit code 0 when removed, 1 when refused or on
any error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, err := g.configWithHome()
			if err != nil {
				return err
			}
			name := args[0]
			out := removeOutput{Removed: name}
			if out.Home, err = filepath.Abs(cfg.Home); err != nil {
				return err
			}
			err = pluginpkg.RemoveChecked(cfg.Home, name, guardOf(cfg))
			var inUse *pluginpkg.InUseError
			if errors.As(err, &inUse) {
				if !force {
					return refusal(err, "remove")
				}
				out.Forced, out.Refused = true, err.Error()
				err = pluginpkg.Remove(cfg.Home, name)
			}
			if err != nil {
				return err
			}
			plan, err := nextPlan(cfg, cfg.Home)
			if err != nil {
				return fmt.Errorf("remove %s: removed, but planning the next reload failed: %w", name, err)
			}
			out.Plan = plan
			if g.json {
				return g.printJSON(out)
			}
			fmt.Fprintf(g.stdout, "%s: removed\n", name)
			if out.Forced {
				fmt.Fprintf(g.stdout, "  forced: %s\n", out.Refused)
			}
			fmt.Fprintln(g.stdout, "\nnext reload ('kernelctl reload', or at once under 'kernelctl run --watch'):")
			writePlan(g.stdout, plan, "plan")
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "remove even a package the host requires or others need")
	cmd.ValidArgsFunction = completePackages(g, 1)
	return cmd
}

// guardOf is what removing or disabling a package must not break under
// cfg: the host's capabilities and the packages its policy requires.
func guardOf(cfg config.Config) pluginpkg.Guard {
	g := pluginpkg.Guard{Host: cfg.Capabilities}
	for _, name := range slices.Sorted(maps.Keys(cfg.Policy)) {
		if cfg.Policy[name] == config.FailureRequired {
			g.Required = append(g.Required, name)
		}
	}
	return g
}

// refusal is the exit-1 error of a refused remove or disable, with the
// way past it.
func refusal(err error, verb string) error {
	return &exitError{code: exitFailed, err: fmt.Errorf("%w (--force to %s it anyway)", err, verb)}
}
