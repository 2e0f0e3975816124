package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sdk/sdktest"
)

// conformanceOutput is the --json schema of `kernelctl conformance`
// (docs/cli.md).
type conformanceOutput struct {
	Dir         string         `json:"dir"`
	Plugin      string         `json:"plugin"`
	Version     string         `json:"version"`
	Confinement string         `json:"confinement"`
	Cases       []sdktest.Case `json:"cases"`
	Denials     []string       `json:"denials,omitempty"`
	Passed      int            `json:"passed"`
	Warned      int            `json:"warned"`
	Failed      int            `json:"failed"`
	Skipped     int            `json:"skipped"`
}

func newConformanceCmd(g *globals) *cobra.Command {
	var confine, inputs string
	cmd := &cobra.Command{
		Use: "conformance PKGDIR",
		Example: `  kernelctl conformance ./hello
  kernelctl conformance ./hello --confine
  kernelctl conformance ./hello --inputs inputs.json
  kernelctl conformance ./hello --config kernel.json --json`,
		Short: "Check that a package's plugin speaks the protocol",
		Long: `Start the plugin of the package directory PKGDIR as the kernel would and run the
conformance suite on it (docs/conformance.md): the handshake, declarations, ping,
a call to every declared interceptor, strategy, provider, action and
contribution of a host kind, each provider asked for a stream and held to its
credits, $/cancel, an unknown method, malformed frames, the stop sequence, leftover processes, and
what the plugin writes on stdout and stderr. Each case prints PASS, WARN (a
SHOULD of docs/protocol.md is broken), FAIL (a MUST is broken) or SKIP, with the
reason. With --config, the plugin gets the config and environment the host
config gives its package, and is confined as its confinement says.

With --confine, the plugin runs confined under "require" (or the mode given,
--confine=best-effort) to its manifest's permissions, plus the host config's
grants and less its denies with --config (docs/security.md, "Confinement"):
a rule this machine cannot enforce fails the handshake. What the plugin was
denied, as its errors and stderr show it, is listed and ends the reason of a
failed case ("denied: read /home/u/.ssh/id_ed25519 (not in
permissions.fs.read)"); a call answered with an error showing a denial fails.

Each declaration is called with the input --inputs FILE gives it (a JSON
object keyed by "<kind>/<id>", as the case is named without "call/":
{"provider/echo": {"q": 1}, "tool/search.web": {"q": "x"}}), else with the
first example it declares, else null.

The exit code is 1 if any case failed; warnings alone exit 0.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if fi, err := os.Stat(dir); err != nil {
				return &usageError{fmt.Errorf("conformance: %w", err)}
			} else if !fi.IsDir() {
				return &usageError{fmt.Errorf("conformance: %s is not a package directory", dir)}
			}
			opts, err := g.conformanceOptions(dir)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("confine") {
				if msg := pluginpkg.CheckConfinementMode(confine); msg != "" {
					return &usageError{fmt.Errorf("conformance: --confine: %s", msg)}
				}
				opts.Confinement.Mode = confine
			}
			if inputs != "" {
				if opts.Inputs, err = readInputs(inputs); err != nil {
					return &usageError{err}
				}
			}
			rep, err := sdktest.Run(cmd.Context(), dir, opts)
			if err != nil {
				return err
			}
			out := outputOf(rep)
			if g.json {
				if err := g.printJSON(out); err != nil {
					return err
				}
			} else {
				printConformance(g, out)
			}
			if out.Failed > 0 {
				return failed
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&confine, "confine", "", "run the plugin confined to its permissions: require (the default of a bare --confine), best-effort or off")
	cmd.Flags().Lookup("confine").NoOptDefVal = pluginpkg.ConfineRequire
	cmd.Flags().StringVar(&inputs, "inputs", "", "a JSON file of the input to call each declaration with, keyed by <kind>/<id> (provider/echo, tool/search.web)")
	return cmd
}

// readInputs reads --inputs FILE: a JSON object of inputs keyed by
// "<kind>/<id>".
func readInputs(path string) (map[string]json.RawMessage, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("conformance: --inputs: %w", err)
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(data, &in); err != nil || in == nil {
		if err == nil {
			err = errors.New("null is not an object")
		}
		return nil, fmt.Errorf("conformance: --inputs %s: not a JSON object keyed by <kind>/<id>: %w", path, err)
	}
	return in, nil
}

// outputOf is the output of the report rep, its cases counted.
func outputOf(rep sdktest.Report) conformanceOutput {
	out := conformanceOutput{Dir: rep.Dir, Plugin: rep.Plugin, Version: rep.Version,
		Confinement: rep.Confinement, Cases: rep.Cases, Denials: rep.Denials}
	for _, c := range rep.Cases {
		switch c.Status {
		case sdktest.Pass:
			out.Passed++
		case sdktest.Warn:
			out.Warned++
		case sdktest.Fail:
			out.Failed++
		case sdktest.Skip:
			out.Skipped++
		}
	}
	return out
}

// conformanceOptions gives the plugin what the --config host config gives
// its package: plugin_config, plugin_env, its confinement and the session
// (whose workspace is ${workspace}). Without --config, nothing.
func (g *globals) conformanceOptions(dir string) (sdktest.Options, error) {
	var opts sdktest.Options
	if g.configPath == "" {
		return opts, nil
	}
	cfg, err := g.config()
	if err != nil {
		return opts, err
	}
	m, err := pluginpkg.ParseFile(filepath.Join(dir, pluginpkg.ManifestFile))
	if err != nil {
		return opts, nil // the manifest case reports it
	}
	opts.Config = cfg.PluginConfig[m.Name]
	opts.Confinement = cfg.ConfinementOf(m.Name)
	opts.Session = cfg.Session
	for k, v := range cfg.PluginEnv[m.Name] {
		if opts.Env == nil {
			opts.Env = map[string]string{}
		}
		opts.Env[k] = v.Value
	}
	return opts, nil
}

func printConformance(g *globals, out conformanceOutput) {
	if out.Plugin == "" {
		fmt.Fprintf(g.stdout, "conformance of %s\n\n", out.Dir)
	} else {
		fmt.Fprintf(g.stdout, "conformance of %s %s (%s)\n\n", out.Plugin, out.Version, out.Dir)
	}
	if out.Confinement != "" && out.Confinement != pluginpkg.ConfineOff {
		fmt.Fprintf(g.stdout, "confinement: %s\n\n", out.Confinement)
	}
	width := 0
	for _, c := range out.Cases {
		width = max(width, len(c.Name))
	}
	for _, c := range out.Cases {
		fmt.Fprintf(g.stdout, "%-*s  %-4s  %s\n", width, c.Name, strings.ToUpper(string(c.Status)), c.Reason)
	}
	if len(out.Denials) > 0 {
		fmt.Fprintf(g.stdout, "\nthe plugin was denied (docs/security.md, \"Confinement\"):\n")
		for _, d := range out.Denials {
			fmt.Fprintf(g.stdout, "  %s\n", d)
		}
	}
	fmt.Fprintf(g.stdout, "\n%d %s: %d passed, %d warned, %d failed, %d skipped\n",
		len(out.Cases), plural(len(out.Cases), "case", "cases"), out.Passed, out.Warned, out.Failed, out.Skipped)
}
