package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/pluginpkg"
)

// Where `run` records published generations, relative to the home.
const (
	stateDir        = "state"
	currentSnapshot = "current.json"
	snapshotsDir    = "snapshots"
)

// currentSnapshotPath is the snapshot of the last published generation.
func currentSnapshotPath(home string) string {
	return filepath.Join(home, stateDir, currentSnapshot)
}

// lastRecorded returns the highest generation number recorded in
// <home>/state/snapshots (0 when there is none), so that a new run
// continues the numbering instead of overwriting <n>.json. Only the names
// <n>.json count; other entries are ignored.
func lastRecorded(home string) (uint64, error) {
	dir := filepath.Join(home, stateDir, snapshotsDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("recorded generations: %w", err)
	}
	var last uint64
	for _, e := range entries {
		digits, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(digits, 10, 64); err == nil && n > last {
			last = n
		}
	}
	if last == math.MaxUint64 {
		return 0, fmt.Errorf("recorded generations: %s holds generation %d: no number is left", dir, last)
	}
	return last, nil
}

// writeSnapshots records g as <home>/state/snapshots/<n>.json and
// <home>/state/current.json, atomically.
func writeSnapshots(home string, g *generation.Generation) error {
	s := g.Snapshot()
	if err := generation.WriteSnapshot(filepath.Join(home, stateDir, snapshotsDir, fmt.Sprintf("%d.json", s.Generation)), s); err != nil {
		return err
	}
	return generation.WriteSnapshot(currentSnapshotPath(home), s)
}

func newPlanCmd(g *globals) *cobra.Command {
	var plainHTTP bool
	cmd := &cobra.Command{
		Use: "plan [SOURCE]",
		Example: `  kernelctl plan --config kernel.json
  kernelctl plan --config kernel.json --json`,
		Short: "Show what a reload would change",
		Long: `Compare the last published generation (the snapshot 'kernelctl run' keeps in
<home>/state/current.json; none means an empty generation 0) with what the home
and config now ask for, without starting anything: per package its class
(unchanged, added, removed, reloaded) and the reason for each reload, the
interceptor order and slot owners before and after, and the problems already
known (optional plugins that would be left out are warnings, such as a
confined one whose manifest asks for permissions not accepted). Then, per
plugin, its confinement on this machine: the mode and, when confined, the
permissions requested, granted, denied and effective, what is enforced and
what is not, with the Landlock ABI found; under "require", a plugin this
machine cannot confine is marked "would not start". With SOURCE (a package
directory, archive, oci://REGISTRY/REPOSITORY:TAG or @sha256:…, or
oci-layout:PATH:TAG), print what 'kernelctl upgrade SOURCE --dry-run' prints
instead, the resolved artifact digest included. Exit code: 0 no
changes, 2 changes that will apply, 1 error or problems that would fail the
build.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 1 {
				return g.planArtifact(args[0], plainHTTP)
			}
			cfg, err := g.configWithHome()
			if err != nil {
				return err
			}
			from, err := generation.ReadSnapshot(currentSnapshotPath(cfg.Home))
			if errors.Is(err, fs.ErrNotExist) {
				from, err = &generation.Snapshot{Format: generation.SnapshotFormat}, nil
			}
			if err != nil {
				return err
			}
			p, err := kernel.PlanFrom(cfg, from)
			if err != nil {
				return err
			}
			inst, err := pluginpkg.LoadInstalled(cfg.Home)
			if err != nil {
				return err
			}
			return g.printPlan(p, "plan", confinements(cfg, inst))
		},
	}
	cmd.Flags().BoolVar(&plainHTTP, "plain-http", false, "reach an oci:// registry over plain HTTP (a local test registry)")
	return cmd
}

func newDiffCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "diff A B",
		Example: `  kernelctl diff ~/.extkernel/state/snapshots/1.json ~/.extkernel/state/snapshots/2.json`,
		Short:   "Compare two generation snapshots",
		Long: `Compare two generation snapshots (files written by 'kernelctl run' under
<home>/state/) with the same classification as 'plan'. Exit code: 0 no
differences, 2 differences, 1 error.`,
		Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			a, err := generation.ReadSnapshot(args[0])
			if err != nil {
				return err
			}
			b, err := generation.ReadSnapshot(args[1])
			if err != nil {
				return err
			}
			return g.printPlan(generation.Diff(a, b), "diff", nil)
		},
	}
}

// planOutput is the --json schema of `kernelctl plan`: the plan, and each
// plugin's confinement (docs/cli.md).
type planOutput struct {
	*generation.Plan
	Confinement []confinementJSON `json:"confinement"`
}

// printPlan prints p, and the confinements cs unless nil, and maps it to
// the exit code: 1 when it lists problems that would fail the build, else
// 2 when it changes something.
func (g *globals) printPlan(p *generation.Plan, verb string, cs []confinementJSON) error {
	var out any = p
	if cs != nil {
		out = planOutput{Plan: p, Confinement: cs}
	}
	if g.json {
		if err := g.printJSON(out); err != nil {
			return err
		}
	} else {
		writePlan(g.stdout, p, verb)
		if cs != nil {
			writeConfinements(g.stdout, cs)
		}
	}
	if len(p.Problems) > 0 {
		return failed
	}
	if p.Changed() {
		return &exitError{code: exitChanges}
	}
	return nil
}

// classMark prefixes each package line, as diff tools do.
var classMark = map[generation.Class]string{
	generation.ClassAdded: "+", generation.ClassRemoved: "-", generation.ClassReloaded: "~", generation.ClassUnchanged: " ",
}

func writePlan(w io.Writer, p *generation.Plan, verb string) {
	to := "the home and config now"
	if verb == "diff" {
		to = fmt.Sprintf("generation %d", p.To)
	}
	changes := 0
	for _, c := range p.Packages {
		if c.Class != generation.ClassUnchanged {
			changes++
		}
	}
	fmt.Fprintf(w, "%s: generation %d -> %s: %d %s\n", verb, p.From, to, changes, plural(changes, "package change", "package changes"))
	if changes == 0 && p.Changed() {
		// The host's inputs changed, or the files of a package kept at its
		// running version (generation.Inputs.Kept) did.
		fmt.Fprintln(w, "  (the inputs changed, no package did: the registry is rebuilt, no sidecar restarts)")
	}
	section(w, "packages", len(p.Packages), func() {
		var b strings.Builder
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, c := range p.Packages {
			fmt.Fprintf(tw, "  %s %s\t%s\t%s\t%s\n", classMark[c.Class], c.Name, classWord(c), versions(c), strings.Join(c.Reasons, "; "))
		}
		tw.Flush()
		for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			fmt.Fprintln(w, strings.TrimRight(line, " "))
		}
	})
	section(w, "interceptors", len(p.Interceptors), func() {
		for _, d := range p.Interceptors {
			fmt.Fprintf(w, "  %s: %s\n", d.Point, beforeAfter(chain(d.Before), chain(d.After), d.Changed))
		}
	})
	section(w, "slots", len(p.Slots), func() {
		for _, d := range p.Slots {
			fmt.Fprintf(w, "  %s: %s\n", d.Slot, beforeAfter(owner(d.Before), owner(d.After), d.Changed))
		}
	})
	list(w, "problems (the build would fail)", p.Problems)
	list(w, "warnings", p.Warnings)
	list(w, "known only after the handshake", p.Pending)
}

func versions(c generation.Change) string {
	switch {
	case c.From == "":
		return c.To
	case c.To == "" || c.From == c.To:
		return c.From
	}
	return c.From + " -> " + c.To
}

func chain(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, " -> ")
}

func owner(name string) string {
	if name == "" {
		return "(host default)"
	}
	return name
}

func beforeAfter(before, after string, changed bool) string {
	if !changed {
		return before + " (unchanged)"
	}
	return before + "  =>  " + after
}

// list prints a titled list, or nothing when it is empty.
func list(w io.Writer, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", title)
	for _, it := range items {
		fmt.Fprintf(w, "  %s\n", it)
	}
}

// classWord is a change's class, with "(lazy: declared, not started)" for
// an added or reloaded lazy member (it is published from its
// declarations, no process started) and "(lazy)" for another lazy one.
func classWord(c generation.Change) string {
	switch {
	case c.Activation != pluginpkg.ActivationLazy:
		return string(c.Class)
	case c.Class == generation.ClassAdded || c.Class == generation.ClassReloaded:
		return string(c.Class) + " (lazy: declared, not started)"
	}
	return string(c.Class) + " (lazy)"
}
