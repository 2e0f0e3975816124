package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/pluginpkg"
)

// newStateCmd builds `kernelctl enable NAME...` or `kernelctl disable
// NAME...`. disable refuses, unless --force, a package the host config
// requires or others need (pluginpkg.DisableChecked).
func newStateCmd(g *globals, verb string) *cobra.Command {
	past, long := "enabled", "Mark installed packages enabled in the home's state file (written atomically)."
	var force bool
	if verb == "disable" {
		past, long = "disabled", `Mark installed packages disabled in the home's state file (written atomically).
A package is refused, as remove refuses it, when the host config's policy
(--config) marks it required or when another enabled package requires a
capability only it provides; --force disables it anyway.`
	}
	cmd := &cobra.Command{
		Use:     verb + " NAME...",
		Short:   fmt.Sprintf("Mark installed packages %s", past),
		Long:    long,
		Example: fmt.Sprintf("  kernelctl %s audit\n  kernelctl %s audit memory --home ~/.extkernel", verb, verb),
		Args:    cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, err := g.configWithHome()
			if err != nil {
				return err
			}
			out := stateOutput{Home: absPath(cfg.Home), Action: past, Packages: []string{}}
			for _, name := range args {
				switch {
				case verb == "enable":
					err = pluginpkg.Enable(cfg.Home, name)
				case force:
					err = pluginpkg.Disable(cfg.Home, name)
				default:
					if err = pluginpkg.DisableChecked(cfg.Home, name, guardOf(cfg)); errors.Is(err, pluginpkg.ErrInUse) {
						err = refusal(err, "disable")
					}
				}
				if err != nil {
					return err
				}
				out.Packages = append(out.Packages, name)
				if !g.json {
					fmt.Fprintf(g.stdout, "%s: %s\n", name, past)
				}
			}
			if g.json {
				return g.printJSON(out)
			}
			return nil
		},
	}
	if verb == "disable" {
		cmd.Flags().BoolVar(&force, "force", false, "disable even a package the host requires or others need")
		cmd.Example += "\n  kernelctl disable kvstore --config kernel.json --force"
	}
	return cmd
}

// stateOutput is what `enable --json` and `disable --json` print.
type stateOutput struct {
	Home string `json:"home"`
	// Action is "enabled" or "disabled".
	Action string `json:"action"`
	// Packages are the names given, in their order.
	Packages []string `json:"packages"`
}

// pinOutput is what `pin --json` prints.
type pinOutput struct {
	Package string `json:"package"`
	Pinned  bool   `json:"pinned"`
	// Pin is the pin recorded, omitted when unpinned.
	Pin string `json:"pin,omitempty"`
	// Kind is "package" (files and command) or "executable" (its sha256),
	// omitted when unpinned.
	Kind string `json:"kind,omitempty"`
}

// newPinCmd builds `kernelctl pin NAME [PIN]`: pin the package's files and
// runtime command (by default, as they are now); --executable pins the
// executable's sha256 alone; --clear unpins.
func newPinCmd(g *globals) *cobra.Command {
	var clear, executable bool
	cmd := &cobra.Command{
		Use: "pin NAME [PIN]",
		Example: `  kernelctl pin redactor
  kernelctl pin redactor --executable
  kernelctl pin redactor --clear`,
		Short: "Pin a package's files and command",
		Long: `Pin a package, recorded in the home's state file: the kernel verifies the pin
right before every start and refuses to start a package that differs, naming
what changed. Without PIN the package as it is now is pinned: a package pin
"package:<files>:<command>" covers every file of the package (interpreter
caches excluded) and the file its command resolves to, such as the python3
found on PATH. --executable pins only the runtime executable's sha256 (64 hex
digits), as earlier versions did. PIN may be either form. --clear removes the
pin.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(_ *cobra.Command, args []string) error {
			inst, err := g.loadInstalled()
			if err != nil {
				return err
			}
			name, pin := args[0], ""
			if len(args) == 2 {
				pin = args[1]
			}
			if !clear && pin == "" {
				if pin, err = currentPin(inst, name, executable); err != nil {
					return err
				}
			}
			if err := pluginpkg.Pin(inst.Home, name, pin); err != nil {
				return err
			}
			return printPin(g, name, pin)
		},
	}
	cmd.Flags().BoolVar(&clear, "clear", false, "remove the pin")
	cmd.Flags().BoolVar(&executable, "executable", false, "pin only the runtime executable's sha256")
	return cmd
}

// printPin prints the pin recorded for name ("" when unpinned).
func printPin(g *globals, name, pin string) error {
	out := pinOutput{Package: name, Pinned: pin != "", Pin: pin}
	switch {
	case pin == "":
	case pluginpkg.IsPackagePin(pin):
		out.Kind = "package"
	default:
		out.Kind = "executable"
	}
	if g.json {
		return g.printJSON(out)
	}
	switch out.Kind {
	case "":
		fmt.Fprintf(g.stdout, "%s: unpinned\n", name)
	case "package":
		fmt.Fprintf(g.stdout, "%s: pinned to %s (package files and command)\n", name, pin)
	default:
		fmt.Fprintf(g.stdout, "%s: pinned to sha256 %s (executable)\n", name, pin)
	}
	return nil
}

// currentPin digests the named package as it is now: its package pin, or
// with executable its runtime executable's sha256.
func currentPin(inst *pluginpkg.Installed, name string, executable bool) (string, error) {
	for _, p := range inst.Packages {
		if p.Name != name {
			continue
		}
		if !executable {
			return p.PackagePin()
		}
		path, err := p.CommandPath()
		if err != nil {
			return "", err
		}
		return pluginpkg.ExecutableSHA256(path)
	}
	return "", fmt.Errorf("package %q: %w", name, pluginpkg.ErrNotInstalled)
}
