package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/pluginpkg"
)

// validateOutput is the --json schema of `kernelctl validate` (docs/cli.md).
type validateOutput struct {
	Manifests []manifestResult `json:"manifests"`
	Valid     int              `json:"valid"`
	Invalid   int              `json:"invalid"`
}

type manifestResult struct {
	Path     string         `json:"path"`
	Valid    bool           `json:"valid"`
	Problems []problemField `json:"problems"`
	// Warnings are about a valid manifest: they do not make it invalid.
	Warnings []problemField `json:"warnings"`
}

type problemField struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func newValidateCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "validate [DIR|FILE...]",
		Example: `  kernelctl validate --home ~/.extkernel
  kernelctl validate ./my-plugin
  kernelctl validate ./my-plugin/plugin.json --json`,
		Short: "Validate package manifests",
		Long: `Validate plugin.json manifests and print every problem with its field path.

Each argument is a manifest file, a package directory holding plugin.json, or a
directory of package directories. With no argument, every package in the home is
validated. A valid manifest whose protocol range ("kernel") excludes this
kernel's protocol gets a warning saying which side to upgrade, as run reports
it. The exit code is 1 if any manifest is invalid; warnings alone exit 0.`,
		RunE: func(_ *cobra.Command, args []string) error {
			paths, err := g.manifestPaths(args)
			if err != nil {
				return err
			}
			out := validateOutput{Manifests: []manifestResult{}}
			for _, p := range paths {
				r := validateOne(p)
				if r.Valid {
					out.Valid++
				} else {
					out.Invalid++
				}
				out.Manifests = append(out.Manifests, r)
			}
			if g.json {
				if err := g.printJSON(out); err != nil {
					return err
				}
			} else {
				printValidate(g, out)
			}
			if out.Invalid > 0 {
				return failed
			}
			return nil
		},
	}
}

// manifestPaths expands the arguments into a sorted list of manifest files.
func (g *globals) manifestPaths(args []string) ([]string, error) {
	if len(args) == 0 {
		cfg, err := g.configWithHome()
		if err != nil {
			return nil, err
		}
		paths, err := packageManifests(filepath.Join(cfg.Home, pluginpkg.PackagesDir))
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("home %s has no packages directory", cfg.Home)
		}
		return paths, err
	}
	var paths []string
	for _, arg := range args {
		fi, err := os.Stat(arg)
		if err != nil {
			return nil, &usageError{fmt.Errorf("validate: %w", err)}
		}
		switch {
		case !fi.IsDir():
			paths = append(paths, arg)
		case fileExists(filepath.Join(arg, pluginpkg.ManifestFile)):
			paths = append(paths, filepath.Join(arg, pluginpkg.ManifestFile))
		default:
			more, err := packageManifests(arg)
			if err != nil {
				return nil, err
			}
			if len(more) == 0 {
				return nil, &usageError{fmt.Errorf("validate: %s holds no %s and no package directories", arg, pluginpkg.ManifestFile)}
			}
			paths = append(paths, more...)
		}
	}
	return paths, nil
}

// packageManifests lists dir/*/plugin.json in directory-name order.
func packageManifests(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range entries {
		p := filepath.Join(dir, e.Name(), pluginpkg.ManifestFile)
		if fileExists(p) {
			paths = append(paths, p)
		}
	}
	return paths, nil // os.ReadDir sorts by name
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

func validateOne(path string) manifestResult {
	r := manifestResult{Path: path, Valid: true, Problems: []problemField{}, Warnings: []problemField{}}
	m, err := pluginpkg.ParseFile(path)
	if err == nil {
		if msg := kernelRangeWarning(m); msg != "" {
			r.Warnings = append(r.Warnings, problemField{"kernel", msg})
		}
		return r
	}
	r.Valid = false
	var ve *pluginpkg.ValidationError
	if errors.As(err, &ve) {
		for _, fe := range ve.Problems {
			r.Problems = append(r.Problems, problemField{fe.Field, fe.Message})
		}
		return r
	}
	r.Problems = append(r.Problems, problemField{Message: err.Error()})
	return r
}

// kernelRangeWarning returns the sentence `run` would fail a runtime
// package's start with when its manifest's protocol range excludes this
// kernel's protocol, or "". A declarative package is never started, so its
// range is never checked.
func kernelRangeWarning(m *pluginpkg.Manifest) string {
	if m.Runtime == nil {
		return ""
	}
	if err := m.CheckKernel(); err != nil {
		return err.Error()
	}
	return ""
}

func printValidate(g *globals, out validateOutput) {
	warnings := 0
	for _, m := range out.Manifests {
		for _, w := range m.Warnings {
			fmt.Fprintf(g.stdout, "%s: warning: %s: %s\n", m.Path, w.Field, w.Message)
			warnings++
		}
		if m.Valid && len(m.Warnings) == 0 {
			fmt.Fprintf(g.stdout, "%s: ok\n", m.Path)
			continue
		}
		for _, p := range m.Problems {
			if p.Field == "" {
				fmt.Fprintf(g.stdout, "%s: %s\n", m.Path, p.Message)
			} else {
				fmt.Fprintf(g.stdout, "%s: %s: %s\n", m.Path, p.Field, p.Message)
			}
		}
	}
	fmt.Fprintf(g.stdout, "\n%d %s: %d valid, %d invalid", len(out.Manifests),
		plural(len(out.Manifests), "manifest", "manifests"), out.Valid, out.Invalid)
	if warnings > 0 {
		fmt.Fprintf(g.stdout, ", %d %s", warnings, plural(warnings, "warning", "warnings"))
	}
	fmt.Fprintln(g.stdout)
}
