package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/pluginpkg"
)

// installStep, when set, is called at each step of an install or upgrade
// (pluginpkg.InstallOptions.OnStep). Only tests set it, to kill the
// process between steps.
var installStep func(pluginpkg.InstallStep)

// installOutput is the --json schema of install, upgrade and rollback
// (docs/cli.md).
type installOutput struct {
	// Action is "installed", "upgraded", "unchanged" or "rolled back".
	Action     string `json:"action"`
	DryRun     bool   `json:"dry_run"`
	Home       string `json:"home"`
	Source     string `json:"source,omitempty"`
	SourceKind string `json:"source_kind,omitempty"`
	// Origin is the artifact installed, by digest, for an oci:// or
	// oci-layout: source: what the state file records.
	Origin string `json:"origin,omitempty"`
	// Signature says what signature verification found, when a policy
	// applied: "verified: …" or "unverified: <why> (policy warn …)".
	Signature string         `json:"signature,omitempty"`
	Package   installedJSON  `json:"package"`
	Previous  *installedJSON `json:"previous"`
	Changed   []string       `json:"changed_files"`
	// WidensPermissions lists what the new version asks for beyond the
	// permissions accepted before ("net.connect api.example.com:443");
	// PermissionsAccepted says --accept-permissions accepted them (else
	// the upgrade is refused).
	WidensPermissions   []string `json:"widens_permissions,omitempty"`
	PermissionsAccepted bool     `json:"permissions_accepted,omitempty"`
	// Bake is the bake an upgrade --bake recorded, omitted without one.
	Bake *bakeJSON        `json:"bake,omitempty"`
	Plan *generation.Plan `json:"plan"`
}

// bakeJSON is an upgrade's bake in installOutput.
type bakeJSON struct {
	Duration     string  `json:"duration"`
	MaxErrorRate float64 `json:"max_error_rate"`
	MinCalls     int     `json:"min_calls"`
	FromVersion  string  `json:"from_version"`
}

// installedJSON is one version of a package in installOutput.
type installedJSON struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Digest  string `json:"digest,omitempty"`
	Dir     string `json:"dir"`
	Enabled bool   `json:"enabled"`
	Pin     string `json:"pin,omitempty"`
}

func toInstalledJSON(p *pluginpkg.Package, digest string) installedJSON {
	return installedJSON{Name: p.Name, Version: p.Manifest.Version.String(), Digest: digest, Dir: p.Dir, Enabled: p.Enabled, Pin: p.Pin}
}

// installFlags are the flags of install and upgrade.
type installFlags struct {
	upgrade, dryRun, acceptPermissions, plainHTTP bool
	// bake, when positive, is upgrade --bake (with bakeRate and
	// bakeCalls): the upgrade goes on probation (pluginpkg.Bake).
	bake      time.Duration
	bakeRate  float64
	bakeCalls int
	bakeOpt   *pluginpkg.Bake // from them (bakeOption)
}

// bakeOption is the pluginpkg.Bake the flags ask for, nil without --bake.
// The rate flags need --bake.
func (f *installFlags) bakeOption(cmd *cobra.Command) (*pluginpkg.Bake, error) {
	if f.bake == 0 {
		for _, name := range []string{"bake-max-error-rate", "bake-min-calls"} {
			if cmd.Flags().Changed(name) {
				return nil, &usageError{fmt.Errorf("--%s needs --bake", name)}
			}
		}
		return nil, nil
	}
	b := &pluginpkg.Bake{Duration: f.bake, MaxErrorRate: f.bakeRate, MinCalls: f.bakeCalls}
	if err := b.Validate(); err != nil {
		return nil, &usageError{fmt.Errorf("--%w", err)}
	}
	return b, nil
}

// addFlags adds the flags install and upgrade share.
func (f *installFlags) addFlags(cmd *cobra.Command, dryRun string) {
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, dryRun)
	cmd.Flags().BoolVar(&f.acceptPermissions, "accept-permissions", false,
		"accept the permissions the new version asks for beyond those accepted before (else such an upgrade is refused)")
	cmd.Flags().BoolVar(&f.plainHTTP, "plain-http", false, "reach an oci:// registry over plain HTTP (a local test registry)")
}

func newInstallCmd(g *globals) *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use: "install SOURCE",
		Example: `  kernelctl install ./hello --home ~/.extkernel
  kernelctl install hello-1.0.0.tar.gz --config kernel.json
  kernelctl install hello.zip --upgrade --json`,
		Short: "Install a package from a directory, .tar.gz or .zip",
		Long: `Install the package at SOURCE, a package directory, a gzip-compressed tar
archive or a zip archive, into the home, enabled, with the digest of its files
recorded in the state file (pinning stays 'kernelctl pin'). The manifest and
every entry of the source are checked before anything is written: no path
leaving the package, no link pointing out of it, no device or FIFO, bounds on
entries, sizes and compression ratio (docs/manifest.md, "Installing a
package"). The package is extracted into a staging directory of the home,
synced and renamed into place under the home's lock, so a running kernel's home
can be installed into: its next reload (or run --watch, at once) picks the
package up. Then the plan that reload would apply is printed, as 'kernelctl
plan' prints it. A package of the same name whose files differ is refused
unless --upgrade (and --accept-permissions when the new version asks for more
permissions: see upgrade); the same files again change nothing. --dry-run checks and
plans without writing anything. Exit code 0 when installed (or unchanged), 1
on any error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			_, err := g.install(args[0], f, "install")
			return err
		},
	}
	cmd.Flags().BoolVar(&f.upgrade, "upgrade", false, "replace an installed package of the same name (see upgrade)")
	f.addFlags(cmd, "check the source and print the plan; write nothing")
	return cmd
}

func newUpgradeCmd(g *globals) *cobra.Command {
	var f installFlags
	cmd := &cobra.Command{
		Use: "upgrade SOURCE",
		Example: `  kernelctl upgrade hello-1.1.0.tar.gz --dry-run
  kernelctl upgrade ./hello --config kernel.json
  kernelctl upgrade hello-1.2.0.tar.gz --accept-permissions
  kernelctl upgrade oci://ghcr.io/acme/hello:1.3.0 --bake 10m --bake-max-error-rate 0.05
  kernelctl upgrade hello.zip --json`,
		Short: "Replace an installed package with a new version",
		Long: `Upgrade the package to the one at SOURCE, with install's checks and steps:
print the upgrade (version a -> b, the files that changed) and the plan the
next reload would apply, with its reasons. The version replaced is kept in
<home>/packages/.previous/<name>/ (one version: the one kept before is
deleted), and 'kernelctl rollback NAME' swaps it back. The package keeps its
enabled flag and its pin (a pinned package does not start until pinned again).
A package that is not installed is installed. An upgrade whose manifest asks
for permissions beyond those accepted before (the state file records them: a
first install accepts what it asks for) is refused, naming each one ("widens
permissions: + net.connect api.example.com:443"), unless --accept-permissions;
--dry-run shows it, and exits 1 without the flag. With --bake D the upgrade
goes on probation: a running kernel watches the new version for D and returns
to the one replaced on its own if it crashes past its budget, fails to start
or (--bake-max-error-rate) fails too many calls (docs/operations.md, "Bake").
--dry-run writes nothing. Exit
code 0 when upgraded (or, with --dry-run, upgradable) and when SOURCE holds
exactly the installed files (nothing is written; --json's "action" is
"unchanged"), 1 on any error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.upgrade = true
			var err error
			if f.bakeOpt, err = f.bakeOption(cmd); err != nil {
				return err
			}
			_, err = g.install(args[0], f, "upgrade")
			return err
		},
	}
	f.addFlags(cmd, "check the source and print the upgrade and the plan; write nothing")
	cmd.Flags().DurationVar(&f.bake, "bake", 0,
		"keep the version replaced ready to return to: a running kernel watches the new one this long and rolls back on its own if it fails")
	cmd.Flags().Float64Var(&f.bakeRate, "bake-max-error-rate", 0,
		"with --bake: also roll back when more than this share of calls (0 to 1) fails during the bake")
	cmd.Flags().IntVar(&f.bakeCalls, "bake-min-calls", 20, "with --bake-max-error-rate: judge the rate once this many calls ended")
	return cmd
}

// install runs install or upgrade (verb) of src and prints what it did.
// An upgrade that widens the package's permissions is refused without
// --accept-permissions: with --dry-run, after printing it.
func (g *globals) install(src string, f installFlags, verb string) (*installOutput, error) {
	cfg, err := g.configWithHome()
	if err != nil {
		return nil, err
	}
	archive, opts, fetched, fetchDone, err := fetchArtifact(context.Background(), src, f, cfg.SignaturePolicyFor(src),
		pluginpkg.InstallOptions{Upgrade: f.upgrade, AcceptPermissions: f.acceptPermissions, Bake: f.bakeOpt, OnStep: installStep})
	if err != nil {
		return nil, err
	}
	defer fetchDone()
	res, planHome, done, err := installOrPreview(cfg.Home, archive, opts, f.dryRun)
	if err != nil {
		return nil, err
	}
	defer done()
	home, err := filepath.Abs(cfg.Home)
	if err != nil {
		return nil, err
	}
	out := &installOutput{Action: "installed", DryRun: f.dryRun, Home: home, Source: src, SourceKind: sourceKind(src, res),
		Package: toInstalledJSON(res.Package, res.Digest), Changed: res.Changed,
		WidensPermissions: res.PermissionsAccepted, PermissionsAccepted: res.PermissionsAccepted != nil && f.acceptPermissions}
	if fetched != nil {
		out.Origin, out.Signature = fetched.Origin, signatureText(fetched.Verified)
	}
	if b := res.Package.Bake; b != nil {
		out.Bake = &bakeJSON{Duration: b.Duration.String(), MaxErrorRate: b.MaxErrorRate, MinCalls: b.MinCalls, FromVersion: b.FromVersion}
	}
	switch {
	case res.Unchanged:
		out.Action = "unchanged"
	case res.Previous != nil:
		out.Action = "upgraded"
		prev := toInstalledJSON(res.Previous, res.PreviousDigest)
		out.Previous = &prev
	}
	if out.Changed == nil {
		out.Changed = []string{}
	}
	if f.dryRun { // not the preview's copy, which is gone once printed
		out.Package.Dir = filepath.Join(home, pluginpkg.PackagesDir, res.Package.Name)
	}
	if out.Plan, err = nextPlan(cfg, planHome); err != nil {
		return nil, fmt.Errorf("%s %s: installed, but planning the next reload failed: %w", verb, res.Package.Name, err)
	}
	if g.json {
		err = g.printJSON(out)
	} else {
		writeInstall(g.stdout, out)
	}
	if err == nil && out.WidensPermissions != nil && !out.PermissionsAccepted {
		e := &pluginpkg.PermissionsWidenedError{Package: out.Package.Name, To: out.Package.Version, Added: out.WidensPermissions}
		if out.Previous != nil {
			e.From = out.Previous.Version
		}
		err = installRefused(e)
	}
	return out, err
}

// installOrPreview installs src into home with opts, or with dryRun
// previews it (accepting permissions, so that a widening shows: install
// refuses it once printed) in a copy of the home, planHome; done removes
// the copy.
func installOrPreview(home, src string, opts pluginpkg.InstallOptions, dryRun bool) (res *pluginpkg.InstallResult, planHome string, done func(), err error) {
	if !dryRun {
		res, err = pluginpkg.InstallSource(home, src, opts)
		return res, home, func() {}, installRefused(err)
	}
	opts.AcceptPermissions = true
	p, err := pluginpkg.PreviewInstall(home, src, opts)
	if err != nil {
		return nil, "", nil, installRefused(err)
	}
	return p.Result, p.Home, func() { p.Close() }, nil
}

// installRefused says how to go past an install refused: 'kernelctl
// upgrade' replaces an installed package, --accept-permissions accepts
// the permissions an upgrade widens.
func installRefused(err error) error {
	var we *pluginpkg.PermissionsWidenedError
	switch {
	case errors.Is(err, pluginpkg.ErrAlreadyInstalled):
		return fmt.Errorf("%w ('kernelctl upgrade' or --upgrade replaces it)", err)
	case errors.As(err, &we):
		from := we.From
		if from == "" {
			from = "(a version that does not load)"
		}
		return fmt.Errorf("upgrade of %s %s -> %s widens permissions: + %s; refused without --accept-permissions (nothing was written)",
			we.Package, from, we.To, strings.Join(we.Added, "; + "))
	}
	return err
}

// nextPlan plans from the last generation recorded in cfg's home (as
// `kernelctl plan` does) to what planHome, the home or a preview of it,
// and cfg ask for.
func nextPlan(cfg config.Config, planHome string) (*generation.Plan, error) {
	from, err := generation.ReadSnapshot(currentSnapshotPath(cfg.Home))
	if errors.Is(err, fs.ErrNotExist) {
		from, err = &generation.Snapshot{Format: generation.SnapshotFormat}, nil
	}
	if err != nil {
		return nil, err
	}
	cfg.Home = planHome
	return kernel.PlanFrom(cfg, from)
}

// writeInstall prints an install, upgrade or rollback, then its plan.
func writeInstall(w io.Writer, out *installOutput) {
	p := out.Package
	would := map[bool]string{false: "", true: "would be "}[out.DryRun]
	from := ""
	if out.Source != "" {
		from = fmt.Sprintf(" from %s (%s)", out.Source, out.SourceKind)
	}
	switch {
	case out.Action == "unchanged":
		fmt.Fprintf(w, "%s %s: installed already with these files%s; nothing changed\n", p.Name, p.Version, from)
	case out.Previous != nil:
		fmt.Fprintf(w, "%s: %s%s %s -> %s%s\n", p.Name, would, out.Action, out.Previous.Version, p.Version, from)
	case out.Action == "rolled back":
		fmt.Fprintf(w, "%s: rolled back to %s (no version was installed)\n", p.Name, p.Version)
	default:
		fmt.Fprintf(w, "%s %s: %sinstalled%s\n", p.Name, p.Version, would, from)
	}
	fmt.Fprintf(w, "  digest %s\n", p.Digest)
	if out.Origin != "" {
		fmt.Fprintf(w, "  artifact %s\n", out.Origin)
	}
	if out.Signature != "" {
		fmt.Fprintf(w, "  signature %s\n", out.Signature)
	}
	if out.Previous != nil {
		if len(out.Changed) > 0 {
			fmt.Fprintf(w, "  files changed: %s\n", strings.Join(out.Changed, ", "))
		}
		if out.WidensPermissions != nil {
			verdict := "refused without --accept-permissions"
			if out.PermissionsAccepted {
				verdict = "accepted with --accept-permissions"
			}
			fmt.Fprintf(w, "  widens permissions: + %s (%s)\n", strings.Join(out.WidensPermissions, "; + "), verdict)
		}
		restores := "restores it"
		if out.Action == "rolled back" {
			restores = "undoes the rollback"
		}
		fmt.Fprintf(w, "  %s %skept in %s ('kernelctl rollback %s' %s)\n", out.Previous.Version, would,
			filepath.Join(out.Home, pluginpkg.PackagesDir, pluginpkg.PreviousDir, p.Name), p.Name, restores)
		if b := out.Bake; b != nil {
			rate := ""
			if b.MaxErrorRate > 0 {
				rate = fmt.Sprintf(", or fails more than %g%% of its calls once %d ended", b.MaxErrorRate*100, b.MinCalls)
			}
			fmt.Fprintf(w, "  on bake for %s: a running kernel returns to %s on its own if %s crashes past its budget, fails to start%s\n",
				b.Duration, b.FromVersion, p.Version, rate)
		}
		if p.Pin != "" {
			fmt.Fprintf(w, "  %s is pinned: it will not start until pinned again ('kernelctl pin %s')\n", p.Name, p.Name)
		}
	}
	if !p.Enabled {
		fmt.Fprintf(w, "  %s is disabled ('kernelctl enable %s')\n", p.Name, p.Name)
	}
	if out.DryRun {
		fmt.Fprintln(w, "  dry run: nothing was written")
	}
	fmt.Fprintln(w, "\nnext reload ('kernelctl reload', or at once under 'kernelctl run --watch'):")
	writePlan(w, out.Plan, "plan")
}

func newRollbackCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use: "rollback NAME",
		Example: `  kernelctl rollback hello
  kernelctl rollback hello --config kernel.json --json`,
		Short: "Restore the version of a package its last upgrade replaced",
		Long: `Swap the package with the version its last upgrade kept in
<home>/packages/.previous/<name>/ (atomically on Linux), so that a second
rollback undoes the first; the state file keeps the package's enabled flag and
pin and records the restored files' digest. Then the plan the next reload would
apply is printed. Exit code 0 when rolled back, 1 when no previous version is
kept or on any error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, err := g.configWithHome()
			if err != nil {
				return err
			}
			res, err := pluginpkg.Rollback(cfg.Home, args[0])
			if err != nil {
				return err
			}
			out := &installOutput{Action: "rolled back", Package: toInstalledJSON(res.Package, res.Digest), Changed: res.Changed}
			if out.Home, err = filepath.Abs(cfg.Home); err != nil {
				return err
			}
			if res.Previous != nil {
				prev := toInstalledJSON(res.Previous, res.PreviousDigest)
				out.Previous = &prev
			}
			if out.Changed == nil {
				out.Changed = []string{}
			}
			if out.Plan, err = nextPlan(cfg, cfg.Home); err != nil {
				return fmt.Errorf("rollback %s: rolled back, but planning the next reload failed: %w", args[0], err)
			}
			if g.json {
				return g.printJSON(out)
			}
			writeInstall(g.stdout, out)
			return nil
		},
	}
	cmd.ValidArgsFunction = completePackages(g, 1)
	return cmd
}
