package pluginpkg_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/extkernel/extkernel/pluginpkg"
)

func ExampleParse() {
	m, err := pluginpkg.Parse("packages/redactor/plugin.json", []byte(`{
		"format": 1,
		"name": "redactor",
		"version": "1.4.2",
		"runtime": {"command": "./bin/redactor", "intercepts": ["tool.after"], "handshake_timeout": "5s"},
		"provides": [{"capability": "security.redact", "version": "1.4.2"}],
		"requires": [{"capability": "storage.kv", "version": "^1.2", "optional": true}]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Name, m.Version, m.Runtime.Command, m.Runtime.Intercepts, m.Runtime.HandshakeTimeout)
	for _, r := range m.Requires {
		fmt.Println("requires", r.Key, r.Constraint, "optional:", r.Optional)
	}
	// Output:
	// redactor 1.4.2 ./bin/redactor [tool.after] 5s
	// requires storage.kv ^1.2 optional: true
}

func ExampleParse_invalid() {
	_, err := pluginpkg.Parse("packages/redactor/plugin.json", []byte(`{
		"format": 1,
		"name": "redactor",
		"version": "1.4",
		"runtime": {"comand": "./bin/redactor", "priority": "high"},
		"requires": [{"capability": "storage.kv", "version": "~2.x.y"}]
	}`))
	fmt.Println(err)
	// Output:
	// packages/redactor/plugin.json: version: "1.4" is not a valid semantic version: use MAJOR.MINOR.PATCH such as "1.0.0"
	// packages/redactor/plugin.json: runtime.comand: unknown field (did you mean "command"?)
	// packages/redactor/plugin.json: runtime.priority: must be an integer, got string
	// packages/redactor/plugin.json: runtime.command: required field is missing
	// packages/redactor/plugin.json: requires[0].version: "~2.x.y" is not a valid semver constraint
}

func ExampleLoadInstalled() {
	home, err := os.MkdirTemp("", "extkernel-home-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)
	write := func(rel, content string) {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	write("packages/alpha/plugin.json", `{"format": 1, "name": "alpha", "version": "1.0.0"}`)
	write("packages/beta/plugin.json", `{"format": 1, "name": "beta", "version": "2.1.0"}`)
	write("packages/broken/plugin.json", `{"format": 1, "name": "broken"}`)
	write("state.json", `{"format": 1, "packages": {"beta": {"enabled": false}}}`)

	inst, err := pluginpkg.LoadInstalled(home)
	if err != nil {
		panic(err)
	}
	for _, p := range inst.Packages {
		fmt.Printf("%s %s enabled=%v\n", p.Name, p.Manifest.Version, p.Enabled)
	}
	for _, w := range inst.Warnings {
		fmt.Println("warning:", w)
	}
	// Output:
	// alpha 1.0.0 enabled=true
	// beta 2.1.0 enabled=false
	// warning: packages/broken/plugin.json: version: required field is missing
}

func ExampleInstall() {
	home, _ := os.MkdirTemp("", "extkernel-home-")
	src, _ := os.MkdirTemp("", "extkernel-src-")
	defer os.RemoveAll(home)
	defer os.RemoveAll(src)
	os.WriteFile(filepath.Join(src, "plugin.json"), []byte(`{"format": 1, "name": "demo", "version": "0.1.0"}`), 0o644)

	if _, err := pluginpkg.Install(home, src); err != nil {
		panic(err)
	}
	if err := pluginpkg.Disable(home, "demo"); err != nil {
		panic(err)
	}
	inst, _ := pluginpkg.LoadInstalled(home)
	fmt.Println(inst.Packages[0].Name, "enabled:", inst.Packages[0].Enabled)
	err := pluginpkg.Enable(home, "missing")
	fmt.Println(errors.Is(err, pluginpkg.ErrNotInstalled))
	// Output:
	// demo enabled: false
	// true
}

// ExampleInstallSource installs a package directory, upgrades it from
// another and rolls the upgrade back. Archives (.tar.gz, .zip) install the
// same way.
func ExampleInstallSource() {
	home, _ := os.MkdirTemp("", "extkernel-home-")
	defer os.RemoveAll(home)
	source := func(version string) string {
		dir, _ := os.MkdirTemp("", "extkernel-src-")
		os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(`{"format": 1, "name": "demo", "version": "`+version+`"}`), 0o644)
		return dir
	}
	v1, v2 := source("1.0.0"), source("1.1.0")
	defer os.RemoveAll(v1)
	defer os.RemoveAll(v2)

	if _, err := pluginpkg.InstallSource(home, v1, pluginpkg.InstallOptions{}); err != nil {
		panic(err)
	}
	_, err := pluginpkg.InstallSource(home, v2, pluginpkg.InstallOptions{})
	fmt.Println("without Upgrade:", errors.Is(err, pluginpkg.ErrAlreadyInstalled))
	res, err := pluginpkg.InstallSource(home, v2, pluginpkg.InstallOptions{Upgrade: true})
	if err != nil {
		panic(err)
	}
	fmt.Println("upgraded", res.Previous.Manifest.Version, "->", res.Package.Manifest.Version, res.Changed)
	res, err = pluginpkg.Rollback(home, "demo")
	if err != nil {
		panic(err)
	}
	fmt.Println("rolled back to", res.Package.Manifest.Version)
	// Output:
	// without Upgrade: true
	// upgraded 1.0.0 -> 1.1.0 [plugin.json]
	// rolled back to 1.0.0
}
