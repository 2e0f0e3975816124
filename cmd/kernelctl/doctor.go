package main

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/pluginpkg"
)

// doctorOutput is the --json schema of `kernelctl doctor` (docs/cli.md).
type doctorOutput struct {
	Home     string          `json:"home"`
	Findings []doctorFinding `json:"findings"`
	Problems int             `json:"problems"`
	Warnings int             `json:"warnings"`
	// Confinement is each plugin's confinement on this machine, as plan
	// shows it.
	Confinement []confinementJSON `json:"confinement"`
}

type doctorFinding struct {
	Severity string `json:"severity"` // "problem" or "warning"
	Package  string `json:"package,omitempty"`
	Check    string `json:"check"`
	Message  string `json:"message"`
}

func newDoctorCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "doctor",
		Example: `  kernelctl doctor --config kernel.json
  kernelctl doctor --home ~/.extkernel --json`,
		Short: "Diagnose a home without starting anything",
		Long: `Check everything that can be checked without starting a plugin: manifests that
do not load, requirements that cannot be resolved, runtime commands that are
missing or not executable, pinned executables whose checksum changed, plugins
whose protocol range excludes this kernel's protocol, slot claims that would
conflict (an optional claimant would be left out, decided as a build decides
it; a claim on a slot the host does not declare is ignored without strict),
plugins the last recorded generation reports as failed or
crashed, and each plugin's confinement on this machine, as plan shows it: a
plugin "require" cannot confine here is a problem, rules "best-effort"
leaves unenforced a warning. Exit code 1 if any problem (not warning) is
found.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, err := g.configWithHome()
			if err != nil {
				return err
			}
			inst, err := pluginpkg.LoadInstalled(cfg.Home)
			if err != nil {
				return err
			}
			cs := confinements(cfg, inst)
			out := doctorOutput{Home: inst.Home, Findings: diagnose(cfg, inst, cs), Confinement: cs}
			for _, f := range out.Findings {
				if f.Severity == "problem" {
					out.Problems++
				} else {
					out.Warnings++
				}
			}
			if g.json {
				err = g.printJSON(out)
			} else {
				printDoctor(g, out)
			}
			if err == nil && out.Problems > 0 {
				return failed
			}
			return err
		},
	}
}

// diagnose runs every check, with the confinements cs planned, and returns
// the findings sorted by package, then check.
func diagnose(cfg config.Config, inst *pluginpkg.Installed, cs []confinementJSON) []doctorFinding {
	var fs []doctorFinding
	add := func(sev, pkg, check, msg string) {
		fs = append(fs, doctorFinding{Severity: sev, Package: pkg, Check: check, Message: msg})
	}
	for _, w := range inst.Warnings {
		if w.Path == pluginpkg.StateFile { // a stale state entry harms nothing
			add("warning", w.Package, "state", w.String())
			continue
		}
		add("problem", w.Package, "manifest", w.String())
	}
	for _, p := range inst.Packages {
		if !p.Enabled || p.Manifest.Runtime == nil {
			continue
		}
		checkExecutable(p, add)
		if err := p.Manifest.CheckKernel(); err != nil {
			add("problem", p.Name, "protocol", err.Error())
		}
	}
	if cl, err := capability.Resolve(inst.CapabilityRequest(cfg.Capabilities, nil)); err != nil {
		add("problem", "", "resolve", err.Error())
	} else {
		for _, pr := range cl.Problems {
			sev := "problem"
			if pr.Severity == capability.Warning {
				sev = "warning"
			}
			add(sev, pr.Package, "resolve", pr.Message)
		}
	}
	if plan, err := kernel.PlanFrom(cfg, &generation.Snapshot{Format: generation.SnapshotFormat}); err == nil {
		for _, pr := range plan.Problems {
			if !contains(fs, pr) {
				add("problem", pluginOf(pr), "plan", pr)
			}
		}
		for _, w := range plan.Warnings {
			if !contains(fs, w) {
				add("warning", pluginOf(w), "plan", w)
			}
		}
	}
	checkRecorded(cfg.Home, add)
	checkConfinements(cs, add)
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Package != fs[j].Package {
			return fs[i].Package < fs[j].Package
		}
		return fs[i].Check < fs[j].Check
	})
	return fs
}

// checkExecutable reports a runtime command that cannot run, or a pinned
// executable whose checksum changed.
func checkExecutable(p *pluginpkg.Package, add func(sev, pkg, check, msg string)) {
	path, err := p.CommandPath()
	if err != nil {
		add("problem", p.Name, "command", err.Error())
		return
	}
	if p.Pin == "" {
		return
	}
	if pluginpkg.IsPackagePin(p.Pin) {
		checkPackagePin(p, add)
		return
	}
	sum, err := pluginpkg.ExecutableSHA256(path)
	switch {
	case err != nil:
		add("problem", p.Name, "pin", err.Error())
	case sum != p.Pin:
		add("problem", p.Name, "pin", fmt.Sprintf("executable %s has sha256 %s, but the package is pinned to %s; it will not start", path, sum, p.Pin))
	}
}

// checkPackagePin reports a package that differs from its package pin.
func checkPackagePin(p *pluginpkg.Package, add func(sev, pkg, check, msg string)) {
	c, err := p.CheckPackagePin()
	switch {
	case err != nil:
		add("problem", p.Name, "pin", err.Error())
	case len(c.Changed) > 0:
		add("problem", p.Name, "pin", fmt.Sprintf("%s changed since the package was pinned (pinned %s, now %s); it will not start",
			strings.Join(c.Changed, " and "), p.Pin, c.Actual))
	}
}

// checkConfinements reports a plugin that "require" would not start (a
// problem) and one whose rules this machine does not all enforce under
// "best-effort" (a warning). A confined plugin's permissions not accepted
// are the plan's finding; a command not found the "command" check's.
func checkConfinements(cs []confinementJSON, add func(sev, pkg, check, msg string)) {
	for _, c := range cs {
		switch {
		case c.WouldNotStart != "":
			add("problem", c.Plugin, "confine", "would not start: "+c.WouldNotStart)
		case len(c.NotEnforced) > 0:
			add("warning", c.Plugin, "confine", fmt.Sprintf("%d %s not enforced on this machine: %s", len(c.NotEnforced),
				plural(len(c.NotEnforced), "rule", "rules"), strings.Join(c.NotEnforced, "; ")))
		}
	}
}

// checkRecorded reports members of the last recorded generation that were
// not running.
func checkRecorded(home string, add func(sev, pkg, check, msg string)) {
	s, err := generation.ReadSnapshot(currentSnapshotPath(home))
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		add("warning", "", "snapshot", err.Error())
		return
	}
	for _, p := range s.Packages {
		if p.Status == generation.StatusFailed || p.Status == generation.StatusCrashed {
			add("warning", p.Name, "last run", fmt.Sprintf("%s in generation %d: %s", p.Status, s.Generation, orNone(p.Reason)))
		}
	}
}

// pluginOf returns the plugin a plan message is about, when it starts with
// `optional plugin "name"`, `required plugin "name"` or, as a registry
// problem does, `"name"`; otherwise "".
func pluginOf(msg string) string {
	for _, prefix := range []string{"optional plugin ", "required plugin ", ""} { // "": a registry problem, `"name" (manifest) ...`
		if rest, ok := strings.CutPrefix(msg, prefix); ok {
			if q, err := strconv.QuotedPrefix(rest); err == nil {
				name, _ := strconv.Unquote(q)
				return name
			}
		}
	}
	return ""
}

// contains reports whether a plan problem repeats a resolution finding.
func contains(fs []doctorFinding, msg string) bool {
	for _, f := range fs {
		if f.Check == "resolve" && len(msg) >= len(f.Message) && msg[len(msg)-len(f.Message):] == f.Message {
			return true
		}
	}
	return false
}

func printDoctor(g *globals, out doctorOutput) {
	for _, f := range out.Findings {
		subject := f.Package
		if subject == "" {
			subject = "(home)"
		}
		fmt.Fprintf(g.stdout, "%-7s  %-12s  %-9s  %s\n", f.Severity, subject, f.Check, f.Message)
	}
	var b strings.Builder
	writeConfinements(&b, out.Confinement)
	conf := b.String()
	if len(out.Findings) == 0 {
		conf = strings.TrimPrefix(conf, "\n")
	}
	fmt.Fprintf(g.stdout, "%s\n", conf)
	fmt.Fprintf(g.stdout, "%s: %d %s, %d %s\n", out.Home, out.Problems, plural(out.Problems, "problem", "problems"),
		out.Warnings, plural(out.Warnings, "warning", "warnings"))
}
