package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

// planConfinement is kernel.PlanConfinement; the golden tests replace it
// to show the same machine everywhere.
var planConfinement = kernel.PlanConfinement

// confineOS is the system whose confinement plan and doctor show: only
// Linux has a Landlock ABI to report. The golden tests set it.
var confineOS = runtime.GOOS

// confinementJSON is one plugin's confinement in the --json output of
// plan and doctor (docs/cli.md).
type confinementJSON struct {
	Plugin string `json:"plugin"`
	// Mode is "require", "best-effort" or "off"; the other fields but
	// Widened are omitted when it is "off".
	Mode string `json:"mode"`
	// WouldNotStart says why, under "require", this machine cannot
	// confine it: its start would fail.
	WouldNotStart string          `json:"would_not_start,omitempty"`
	Requested     *permissionJSON `json:"requested,omitempty"`
	Granted       *permissionJSON `json:"granted,omitempty"`
	Denied        *permissionJSON `json:"denied,omitempty"`
	Effective     *permissionJSON `json:"effective,omitempty"`
	Mechanism     string          `json:"mechanism,omitempty"`
	LandlockABI   *int            `json:"landlock_abi,omitempty"`
	Enforced      []string        `json:"enforced,omitempty"`
	NotEnforced   []string        `json:"not_enforced,omitempty"`
	Notes         []string        `json:"notes,omitempty"`
	// Widened lists what its manifest asks for beyond the permissions the
	// operator accepted (pluginpkg.Package.WidenedPermissions).
	Widened []string `json:"widened,omitempty"`
	// Problem is the error planning it failed with otherwise (its
	// command cannot be found: doctor's "command" check says so).
	Problem string `json:"problem,omitempty"`
}

// permissionJSON is pluginpkg.Permissions in the manifest's grammar,
// every list present.
type permissionJSON struct {
	FS struct {
		Read  []string `json:"read"`
		Write []string `json:"write"`
	} `json:"fs"`
	Net struct {
		Connect []string `json:"connect"`
	} `json:"net"`
	Exec []string `json:"exec"`
}

func toPermissionJSON(p *pluginpkg.Permissions) *permissionJSON {
	if p == nil {
		return nil
	}
	out := &permissionJSON{Exec: nonNilStrings(p.Exec)}
	out.FS.Read, out.FS.Write = nonNilStrings(p.Read), nonNilStrings(p.Write)
	out.Net.Connect = nonNilStrings(p.Connect)
	return out
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// confinements plans the confinement of every enabled package of inst
// with a runtime, in name order, as the kernel built from cfg would
// apply it on this machine.
func confinements(cfg config.Config, inst *pluginpkg.Installed) []confinementJSON {
	out := []confinementJSON{}
	for _, p := range inst.Packages {
		if !p.Enabled || p.Manifest.Runtime == nil {
			continue
		}
		c := confinementJSON{Plugin: p.Name, Mode: cfg.ConfinementOf(p.Name).Mode, Widened: p.WidenedPermissions()}
		if c.Mode == "" {
			c.Mode = pluginpkg.ConfineOff
		}
		if c.Mode == pluginpkg.ConfineOff {
			out = append(out, c)
			continue
		}
		r, err := planConfinement(cfg, p)
		var se *sidecar.StartError
		if errors.As(err, &se) && se.Phase == "confine" {
			c.WouldNotStart = se.Err.Error()
		} else if err != nil {
			c.Problem = err.Error()
		}
		if r != nil && r.Mode != pluginpkg.ConfineOff {
			abi := r.LandlockABI
			c.Requested, c.Granted, c.Denied, c.Effective = toPermissionJSON(r.Requested), toPermissionJSON(r.Granted),
				toPermissionJSON(r.Denied), toPermissionJSON(r.Effective)
			c.Mechanism, c.Enforced, c.NotEnforced, c.Notes = r.Mechanism, r.Enforced, r.NotEnforced, r.Notes
			if confineOS == "linux" { // elsewhere Mechanism says what enforces
				c.LandlockABI = &abi
			}
		}
		out = append(out, c)
	}
	return out
}

// writeConfinements prints each plugin's confinement: its mode and, when
// confined, what it asks for, what the host grants and denies, the
// result, and what this machine enforces of it.
// When every plugin runs unconfined and nothing is to be accepted, it is
// one line.
func writeConfinements(w io.Writer, cs []confinementJSON) {
	if allOff(cs) {
		fmt.Fprintf(w, "\nconfinement: off for every plugin\n")
		return
	}
	head := "confinement"
	for _, c := range cs {
		if c.LandlockABI != nil {
			head += landlockOn(*c.LandlockABI)
			break
		}
	}
	section(w, head, len(cs), func() {
		for _, c := range cs {
			writeConfinement(w, c)
		}
	})
}

// allOff reports whether cs lists plugins, each unconfined, none with
// permissions to accept or a problem.
func allOff(cs []confinementJSON) bool {
	for _, c := range cs {
		if c.Mode != pluginpkg.ConfineOff || len(c.Widened) > 0 || c.Problem != "" {
			return false
		}
	}
	return len(cs) > 0
}

// landlockOn says which Landlock ABI this machine has.
func landlockOn(abi int) string {
	if abi == 0 {
		return " (no Landlock on this machine)"
	}
	return fmt.Sprintf(" (Landlock ABI %d on this machine)", abi)
}

// writeConfinement prints one plugin's confinement.
func writeConfinement(w io.Writer, c confinementJSON) {
	line := "  " + c.Plugin + ": " + c.Mode
	if c.Mechanism != "" {
		line += " (" + c.Mechanism + ")"
	}
	fmt.Fprintln(w, line)
	item := func(label, text string) { fmt.Fprintf(w, "    %-17s%s\n", label, text) }
	items := func(label string, list []string) {
		for i, s := range list {
			if i > 0 {
				label = ""
			}
			item(label, s)
		}
	}
	if c.WouldNotStart != "" {
		item("would not start:", c.WouldNotStart)
	}
	if c.Problem != "" {
		item("not planned:", c.Problem)
	}
	if len(c.Widened) > 0 {
		what := fmt.Sprintf("+ %s (not accepted: 'kernelctl accept-permissions %s')", strings.Join(c.Widened, "; + "), c.Plugin)
		if c.Mode == pluginpkg.ConfineOff {
			what += "; unconfined, it runs anyway"
		}
		item("widened:", what)
	}
	if c.Requested == nil {
		return
	}
	item("requested:", permissionText(c.Requested))
	item("granted:", permissionText(c.Granted))
	item("denied:", permissionText(c.Denied))
	item("effective:", permissionText(c.Effective))
	items("enforced:", c.Enforced)
	items("not enforced:", orNoneList(c.NotEnforced))
	items("notes:", c.Notes)
}

// permissionText is "fs.read a, b; net.connect c", or "(none)".
func permissionText(p *permissionJSON) string {
	if p == nil {
		return "(none)"
	}
	var parts []string
	for _, l := range []struct {
		name string
		list []string
	}{{"fs.read", p.FS.Read}, {"fs.write", p.FS.Write}, {"net.connect", p.Net.Connect}, {"exec", p.Exec}} {
		if len(l.list) > 0 {
			parts = append(parts, l.name+" "+strings.Join(l.list, ", "))
		}
	}
	return orNone(strings.Join(parts, "; "))
}

func orNoneList(list []string) []string {
	if len(list) == 0 {
		return []string{"(none)"}
	}
	return list
}

// acceptOutput is the --json schema of `kernelctl accept-permissions`
// (docs/cli.md).
type acceptOutput struct {
	Package string `json:"package"`
	// Added is what this accepted beyond what was accepted before.
	Added []string `json:"added"`
	// Accepted is what is accepted now: what the manifest asks for.
	Accepted *permissionJSON `json:"accepted"`
}

func newAcceptPermissionsCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "accept-permissions NAME",
		Example: `  kernelctl accept-permissions memory
  kernelctl accept-permissions memory --home ~/.extkernel --json`,
		Short: "Accept the permissions an installed package asks for",
		Long: `Record in the home's state file that the operator accepts the permissions
the installed package NAME asks for now (its manifest's "permissions", or the
minimal set when it declares none), and print what that accepts beyond what
was accepted before. A confined package whose manifest asks for more than was
accepted (edited or copied into the home rather than upgraded with
--accept-permissions) is left out of the generation until then: 'kernelctl
plan' flags it. Exit code 0 when recorded, 1 when NAME is not installed or its
manifest does not load.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, err := g.configWithHome()
			if err != nil {
				return err
			}
			added, err := pluginpkg.AcceptPermissions(cfg.Home, args[0])
			if err != nil {
				return err
			}
			inst, err := pluginpkg.LoadInstalled(cfg.Home)
			if err != nil {
				return err
			}
			out := acceptOutput{Package: args[0], Added: nonNilStrings(added)}
			for _, p := range inst.Packages {
				if p.Name == out.Package {
					out.Accepted = toPermissionJSON(p.Accepted)
				}
			}
			if g.json {
				return g.printJSON(out)
			}
			if len(added) == 0 {
				fmt.Fprintf(g.stdout, "%s: nothing new to accept; accepted: %s\n", out.Package, permissionText(out.Accepted))
				return nil
			}
			fmt.Fprintf(g.stdout, "%s: accepted + %s\n  the next reload applies it ('kernelctl reload', or at once under 'kernelctl run --watch')\n",
				out.Package, strings.Join(added, "; + "))
			return nil
		},
	}
}
