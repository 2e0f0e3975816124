package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/kernel/config"
)

// globals holds the persistent flags shared by every command.
type globals struct {
	home       string
	configPath string
	json       bool
	logLevel   string
	stdout     io.Writer
	stderr     io.Writer
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	g := &globals{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:           "kernelctl",
		Short:         "Inspect and run extkernel plugin packages",
		Long:          "kernelctl lists, validates, resolves and runs the plugin packages installed in an extkernel home, operates the kernel running on it, starts and checks new plugins (new, conformance) and installs them (install, upgrade, rollback, remove, accept-permissions).",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&g.home, "home", "", "extkernel home directory (default: the config's home, $EXTKERNEL_HOME, or ~/.extkernel)")
	pf.StringVar(&g.configPath, "config", "", "host config file (JSON, see docs/config.md)")
	pf.BoolVar(&g.json, "json", false, "print machine-readable JSON (schema in docs/cli.md)")
	pf.StringVar(&g.logLevel, "log-level", "", "level of kernel and plugin logs on stderr: trace, debug, info, warn, error or off (default: $EXTKERNEL_LOG, else warn)")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return g.checkLogLevel() }
	root.AddCommand(newListCmd(g), newValidateCmd(g), newResolveCmd(g),
		newStateCmd(g, "enable"), newStateCmd(g, "disable"), newRunCmd(g),
		newPlanCmd(g), newDiffCmd(g), newDoctorCmd(g), newPinCmd(g),
		newVersionCmd(g), newStatusCmd(g), newStopCmd(g), newRestartCmd(g), newReloadCmd(g),
		newCallCmd(g), newDescribeCmd(g), newLogsCmd(g), newEventsCmd(g), newNewCmd(g), newConformanceCmd(g),
		newInstallCmd(g), newUpgradeCmd(g), newRollbackCmd(g), newRemoveCmd(g), newAcceptPermissionsCmd(g),
		newPackCmd(g), newPushCmd(g))
	for _, cmd := range root.Commands() {
		if n, ok := packageArgs[cmd.Name()]; ok && cmd.ValidArgsFunction == nil {
			cmd.ValidArgsFunction = completePackages(g, n)
		}
	}
	return root
}

// logLevels are the names --log-level and EXTKERNEL_LOG accept.
var logLevels = map[string]hclog.Level{
	"trace": hclog.Trace, "debug": hclog.Debug, "info": hclog.Info,
	"warn": hclog.Warn, "error": hclog.Error, "off": hclog.Off,
}

// checkLogLevel checks --log-level, or EXTKERNEL_LOG when the flag is unset.
func (g *globals) checkLogLevel() error {
	src, name := "--log-level", g.logLevel
	if name == "" {
		src, name = "EXTKERNEL_LOG", os.Getenv("EXTKERNEL_LOG")
	}
	if _, ok := logLevels[strings.ToLower(name)]; name != "" && !ok {
		err := fmt.Errorf("%s %q is not a log level: want trace, debug, info, warn, error or off", src, name)
		if src == "EXTKERNEL_LOG" {
			return &exitError{code: exitFailed, err: err}
		}
		return &usageError{err}
	}
	return nil
}

// level is the level of the kernel's and plugins' logs on stderr:
// --log-level, else EXTKERNEL_LOG, else warn. checkLogLevel has
// validated both.
func (g *globals) level() hclog.Level {
	name := g.logLevel
	if name == "" {
		name = os.Getenv("EXTKERNEL_LOG")
	}
	if l, ok := logLevels[strings.ToLower(name)]; ok {
		return l
	}
	return hclog.Warn
}

// isCobraUsage reports whether err is one of cobra's argument errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "accepts ") ||
		strings.HasPrefix(msg, "requires at least") || strings.Contains(msg, "unknown flag") ||
		strings.Contains(msg, "unknown shorthand flag") || strings.HasPrefix(msg, "accepts ")
}

// config loads the --config file, or returns the zero Config.
func (g *globals) config() (config.Config, error) {
	if g.configPath == "" {
		return config.Config{}, nil
	}
	return config.Load(g.configPath)
}

// configWithHome loads the config and sets its Home as resolveHome picks it.
func (g *globals) configWithHome() (config.Config, error) {
	cfg, err := g.config()
	if err != nil {
		return cfg, err
	}
	cfg.Home, err = g.resolveHome(cfg)
	return cfg, err
}

// resolveHome picks the home: --home, then the config's home, then
// $EXTKERNEL_HOME, then ~/.extkernel.
func (g *globals) resolveHome(cfg config.Config) (string, error) {
	switch {
	case g.home != "":
		return g.home, nil
	case cfg.Home != "":
		return cfg.Home, nil
	case os.Getenv("EXTKERNEL_HOME") != "":
		return os.Getenv("EXTKERNEL_HOME"), nil
	}
	dir, err := os.UserHomeDir()
	if err != nil {
		return "", &usageError{fmt.Errorf("no --home given and no user home directory: %w", err)}
	}
	return filepath.Join(dir, ".extkernel"), nil
}

// absConfigPath is --config made absolute, "" without one.
func (g *globals) absConfigPath() string {
	if g.configPath == "" {
		return ""
	}
	return absPath(g.configPath)
}

// printJSON writes v as indented JSON followed by a newline.
func (g *globals) printJSON(v any) error {
	enc := json.NewEncoder(g.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// failed is returned by a command that printed its problems itself.
var failed = &exitError{code: exitFailed}
