package main

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sdk/node"
	"github.com/extkernel/extkernel/sdk/python"
)

// templates are the files `kernelctl new` writes, per language.
//
//go:embed templates
var templates embed.FS

// The contributions a new plugin declares where the host config names no
// point or slot.
const (
	defaultPoint = contribution.Point("tool.before")
	defaultSlot  = contribution.Slot("context.compactor")
)

// newVersion is the version of a new plugin.
const newVersion = "0.1.0"

// scaffold is what the templates of a new plugin are filled with.
type scaffold struct {
	Name, Version, Lang, LangName string
	Dir                           string // the package directory as given
	Source                        string // the file holding the code
	Command                       string
	Args                          []string
	Point                         contribution.Point
	Slot                          contribution.Slot
	goSDK                         // Go only
}

// language describes how a new plugin in one language is laid out.
type language struct {
	name    string   // for people
	source  string   // the code's file, from templates/<lang>/<source>.tmpl
	command string   // runtime.command; {{name}} is replaced
	args    []string // runtime.args
	sdk     func() []byte
	sdkFile string
}

var languages = map[string]language{
	"go":     {name: "Go", source: "main.go", command: "./bin/"},
	"python": {name: "Python", source: "main.py", command: "python3", args: []string{"main.py"}, sdk: python.Source, sdkFile: python.FileName},
	"node":   {name: "Node.js", source: "main.js", command: "node", args: []string{"main.js"}, sdk: node.Source, sdkFile: node.FileName},
}

func newNewCmd(g *globals) *cobra.Command {
	var lang, dir, sdkDir string
	cmd := &cobra.Command{
		Use: "new NAME --lang go|python|node",
		Example: `  kernelctl new hello --lang python
  kernelctl new hello --lang go --sdk ~/src/extkernel
  kernelctl new hello --lang node --dir plugins/hello --config kernel.json`,
		Short: "Create a plugin package that passes validate and conformance",
		Long: `Create a working plugin package NAME in a new directory (--dir, default ./NAME):
plugin.json, the plugin's source, a short README, and for Python and Node.js
the one-file SDK. The plugin declares an interceptor, a strategy claim, a
provider (echo) and an action (greet); the point and the slot are the first the
host config (--config) names, else tool.before and context.compactor. Its
permissions are the minimum: read its package, write its data and temporary
directories, no network, no programs. It passes kernelctl validate and kernelctl
conformance, confined too (--confine), as generated.

For Go, go.mod requires the SDK module github.com/extkernel/extkernel with a
replace to a local checkout (--sdk DIR; default: the checkout kernelctl was built
from, else the one holding the working directory), and new builds the plugin
into bin/NAME with go build. new refuses to write into an existing directory
that is not empty, and leaves nothing behind when it fails.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return g.newPlugin(args[0], lang, dir, sdkDir)
		},
	}
	f := cmd.Flags()
	f.StringVar(&lang, "lang", "", "the plugin's language: go, python or node (required)")
	f.StringVar(&dir, "dir", "", "the package directory to create (default ./NAME)")
	f.StringVar(&sdkDir, "sdk", "", "Go: a checkout of github.com/extkernel/extkernel for go.mod's replace (default: found from kernelctl's build)")
	return cmd
}

// newPlugin writes the package in a staging directory beside dir and
// renames it into place once complete.
func (g *globals) newPlugin(name, lang, dir, sdkDir string) error {
	if err := pluginpkg.ValidateName(name); err != nil {
		return &usageError{fmt.Errorf("new: name: %w", err)}
	}
	l, ok := languages[lang]
	if !ok {
		return &usageError{fmt.Errorf("new: --lang must be go, python or node, not %q", lang)}
	}
	if dir == "" {
		dir = name
	}
	if err := checkEmpty(dir); err != nil {
		return err
	}
	sc, err := g.newScaffold(name, lang, l, dir)
	if err != nil {
		return err
	}
	if lang == "go" {
		if sc.goSDK, err = findGoSDK(sdkDir); err != nil {
			return err
		}
		sc.relativeReplace(dir)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("new: %w", err)
	}
	stage, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".new-")
	if err != nil {
		return fmt.Errorf("new: %w", err)
	}
	defer os.RemoveAll(stage) // gone once renamed
	files, err := writeScaffold(stage, sc, l)
	if err != nil {
		return fmt.Errorf("new: %w", err)
	}
	if lang == "go" {
		built, err := buildGoPlugin(stage, sc)
		if err != nil {
			return fmt.Errorf("new: %w", err)
		}
		files = append(files, built...)
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		return fmt.Errorf("new: %w", err)
	}
	_ = os.Remove(dir) // an empty directory, which checkEmpty allowed
	if err := os.Rename(stage, dir); err != nil {
		return fmt.Errorf("new: %w", err)
	}
	return printNew(g, newOutput{Name: name, Lang: lang, Dir: dir, Files: files})
}

// newOutput is what `new --json` prints.
type newOutput struct {
	Name string `json:"name"`
	Lang string `json:"lang"`
	// Dir is the package directory as given (--dir, else NAME).
	Dir string `json:"dir"`
	// Files are the files written, relative to Dir, in the order written.
	Files []string `json:"files"`
}

// printNew prints what `new` made.
func printNew(g *globals, out newOutput) error {
	if g.json {
		return g.printJSON(out)
	}
	fmt.Fprintf(g.stdout, "created %s, a %s plugin package, in %s:\n", out.Name, languages[out.Lang].name, out.Dir)
	for _, f := range out.Files {
		fmt.Fprintf(g.stdout, "  %s\n", filepath.Join(out.Dir, f))
	}
	fmt.Fprintf(g.stdout, "next: kernelctl validate %s && kernelctl conformance %s && kernelctl pack %s\n", out.Dir, out.Dir, out.Dir)
	return nil
}

// checkEmpty refuses a dir that exists and is not an empty directory.
func checkEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		if _, serr := os.Stat(dir); serr == nil {
			return fmt.Errorf("new: refusing to overwrite %s: it exists and is not a directory", dir)
		}
		return fmt.Errorf("new: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("new: refusing to overwrite %s: the directory is not empty", dir)
	}
	return nil
}

// newScaffold fills in a new plugin's names, taking the point and slot
// from the host config when it names any.
func (g *globals) newScaffold(name, lang string, l language, dir string) (scaffold, error) {
	sc := scaffold{Name: name, Version: newVersion, Lang: lang, LangName: l.name, Dir: dir, Source: l.source,
		Command: l.command, Args: l.args, Point: defaultPoint, Slot: defaultSlot}
	if lang == "go" {
		sc.Command += name
	}
	cfg, err := g.config()
	if err != nil {
		return sc, err
	}
	if len(cfg.Points) > 0 {
		sc.Point = cfg.Points[0]
	}
	if len(cfg.Slots) > 0 {
		sc.Slot = cfg.Slots[0]
	}
	return sc, nil
}

// writeScaffold writes the package's files into dir and returns their
// names, in the order written.
func writeScaffold(dir string, sc scaffold, l language) ([]string, error) {
	files := []struct{ name, tmpl string }{
		{pluginpkg.ManifestFile, "templates/plugin.json.tmpl"},
		{"README.md", "templates/README.md.tmpl"},
		{l.source, "templates/" + sc.Lang + "/" + l.source + ".tmpl"},
	}
	if sc.Lang == "go" {
		files = append(files, struct{ name, tmpl string }{"go.mod", "templates/go/go.mod.tmpl"})
	}
	var names []string
	for _, f := range files {
		data, err := render(f.tmpl, sc)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), data, 0o644); err != nil {
			return nil, err
		}
		names = append(names, f.name)
	}
	if l.sdk != nil {
		if err := os.WriteFile(filepath.Join(dir, l.sdkFile), l.sdk(), 0o644); err != nil {
			return nil, err
		}
		names = append(names, l.sdkFile)
	}
	return names, nil
}

// render fills the template file name with sc.
func render(name string, sc scaffold) ([]byte, error) {
	t, err := template.ParseFS(templates, name)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, sc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// buildGoPlugin completes a Go plugin's module (go.sum seeded from the
// SDK checkout's, so that no download is needed when the SDK's
// dependencies are in the module cache; go build adds the requirements)
// and builds it into bin/NAME. It returns the files it wrote.
func buildGoPlugin(dir string, sc scaffold) ([]string, error) {
	var files []string
	if sc.SDKDir != "" {
		if sum, err := os.ReadFile(filepath.Join(sc.SDKDir, "go.sum")); err == nil {
			if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
				return nil, err
			}
			files = append(files, "go.sum")
		}
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("building the Go plugin: %w", err)
	}
	bin := filepath.Join("bin", sc.Name)
	cmd := exec.Command(gobin, "build", "-mod=mod", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %w\n%s", err, out)
	}
	return append(files, bin), nil
}
