package benchkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/extkernel/extkernel/pluginpkg"
)

// Build runs `go build -o out/ pkgs...` in root, the main module's
// directory, so that each main package's binary lands in out under its
// directory's name (testdata/bench/floor builds out/floor).
func Build(root, out string, pkgs ...string) error {
	args := append([]string{"build", "-o", out + string(filepath.Separator)}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %v: %w\n%s", pkgs, err, b)
	}
	return nil
}

// Install installs one package per name under home/packages, each from the
// manifest at manifestPath with its name replaced and its runtime.command
// pointing at a hard link to bin in the package directory (with
// runtime.args set to args when there are any), and returns
// them loaded from home (pluginpkg.LoadInstalled), in names' order.
func Install(home, manifestPath, bin string, args []string, names ...string) ([]*pluginpkg.Package, error) {
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		return nil, err
	}
	var manifest map[string]any
	if err := json.Unmarshal(data, &manifest); err != nil {
		return nil, fmt.Errorf("%s: %w", manifestPath, err)
	}
	runtime, ok := manifest["runtime"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: no runtime", manifestPath)
	}
	command := filepath.Base(bin)
	runtime["command"] = "./" + command
	if len(args) > 0 {
		runtime["args"] = args
	}
	for _, name := range names {
		manifest["name"] = name
		text, err := json.MarshalIndent(manifest, "", "  ")
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(home, pluginpkg.PackagesDir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, pluginpkg.ManifestFile), text, 0o644); err != nil {
			return nil, err
		}
		if err := os.Link(bin, filepath.Join(dir, command)); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, err
		}
	}
	inst, err := pluginpkg.LoadInstalled(home)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*pluginpkg.Package, len(inst.Packages))
	for _, p := range inst.Packages {
		byName[p.Name] = p
	}
	pkgs := make([]*pluginpkg.Package, len(names))
	for i, name := range names {
		if pkgs[i] = byName[name]; pkgs[i] == nil {
			return nil, fmt.Errorf("package %q did not load: %v", name, inst.Warnings)
		}
	}
	return pkgs, nil
}

// Names returns n package names prefix-00, prefix-01, ...
func Names(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%02d", prefix, i)
	}
	return names
}
