package sidecar

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
)

var exampleHome = sync.OnceValues(func() (string, error) {
	dir := filepath.Join(binDir, "home", "packages", "good")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join("..", "testdata", "plugins", "good", "plugin.json"))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "plugin.json"), data, 0o644)
	}
	if err == nil {
		err = os.Link(filepath.Join(binDir, "good"), filepath.Join(dir, "good"))
	}
	return filepath.Join(binDir, "home"), err
})

// PluginHome returns a home with the test plugin "good" installed, for
// the examples. It is removed when the test binary exits.
func PluginHome() string {
	home, err := exampleHome()
	if err != nil {
		panic(err)
	}
	return home
}

// PluginOf is what package generation passes Start for p: its name,
// directory, runtime and what its manifest authorizes, with the interceptor
// priority bounds of package contribution. The tests build packages with
// pluginpkg and start them through it.
func PluginOf(p *pluginpkg.Package) Plugin {
	m := p.Manifest
	out := Plugin{Name: p.Name, Dir: p.Dir, ManifestPath: p.ManifestPath, Pin: p.Pin,
		MinPriority: contribution.MinPriority, MaxPriority: contribution.MaxPriority}
	if m.Version != nil {
		out.Version = m.Version.String()
	}
	for _, c := range m.Provides {
		out.Provides = append(out.Provides, Capability{Key: string(c.Key), Version: c.Version})
	}
	if rt := m.Runtime; rt != nil {
		out.Command, out.Args, out.Env, out.HandshakeTimeout = rt.Command, rt.Args, rt.Env, rt.HandshakeTimeout
		for _, pt := range rt.Intercepts {
			out.Intercepts = append(out.Intercepts, string(pt))
		}
		for _, s := range rt.Replaces {
			out.Replaces = append(out.Replaces, string(s))
		}
		for kind, keys := range rt.Contributes {
			if out.Contributes == nil {
				out.Contributes = map[string][]string{}
			}
			out.Contributes[string(kind)] = keys
		}
	}
	return out
}
