package kernel

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// scriptedBin, callerBin, streamerBin and faultyBin are the test plugin
// binaries, built once in TestMain: testdata/plugins/scripted (on the
// SDK), testdata/plugins/caller (raw protocol 1.1, calls the host),
// testdata/plugins/streamer (on the SDK, streams) and
// testdata/plugins/faulty (raw, misbehaves as its mode says).
var scriptedBin, callerBin, streamerBin, faultyBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kernel-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	scriptedBin, callerBin = filepath.Join(dir, "scripted"), filepath.Join(dir, "caller")
	streamerBin, faultyBin = filepath.Join(dir, "streamer"), filepath.Join(dir, "faulty")
	builds := [][]string{
		{"go", "build", "-o", dir + string(filepath.Separator), "../testdata/plugins/scripted", "../testdata/plugins/caller",
			"../testdata/plugins/streamer", "../testdata/plugins/faulty"},
		{"go", "run", "../testdata/demo/build", "../testdata/demo/home"}, // for the examples
	}
	for _, args := range builds {
		build := exec.Command(args[0], args[1:]...)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "%v: %v\n", args, err)
			os.Exit(1)
		}
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

// plug describes one scripted test package.
type plug struct {
	name       string
	version    string // default 1.0.0
	required   bool
	priority   int
	intercepts []string // manifest authorization
	replaces   []string
	// contributes is runtime.contributes; contribute the handshake's
	// contributions (SCRIPT_CONTRIBUTE specs, "kind:key[@prio][=behaviour]").
	contributes map[string][]string
	contribute  []string
	provides    []string                     // "cap@version": manifest and handshake
	methods     map[string]map[string]string // provides[].methods by capability (manifest only)
	requires    []string                     // "cap constraint" or "cap constraint?" for optional
	env         map[string]string
	disabled    bool
	handshake   string // handshake_timeout; default 5s
	bin         string // the plugin binary; default scriptedBin
}

// writeHome creates a home with the given test packages; each package's
// bin/plugin is a hard link to its binary (the scripted one by default).
func writeHome(t testing.TB, plugs ...plug) string {
	t.Helper()
	home := t.TempDir()
	state := map[string]any{}
	for _, p := range plugs {
		dir := filepath.Join(home, "packages", p.name)
		if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		bin := p.bin
		if bin == "" {
			bin = scriptedBin
		}
		linkOrCopy(t, bin, filepath.Join(dir, "bin", "plugin"))
		writeJSON(t, filepath.Join(dir, "plugin.json"), manifest(p))
		if p.disabled {
			state[p.name] = map[string]bool{"enabled": false}
		}
	}
	writeJSON(t, filepath.Join(home, "state.json"), map[string]any{"format": 1, "packages": state})
	return home
}

func manifest(p plug) map[string]any {
	version := p.version
	if version == "" {
		version = "1.0.0"
	}
	env := map[string]string{}
	for k, v := range p.env {
		env[k] = v
	}
	env["SCRIPT_PROVIDES"] = strings.Join(p.provides, ",")
	if len(p.contribute) > 0 {
		env["SCRIPT_CONTRIBUTE"] = strings.Join(p.contribute, ",")
	}
	handshake := p.handshake
	if handshake == "" {
		handshake = "5s"
	}
	var provides, requires []map[string]any
	for _, kv := range p.provides {
		k, v, _ := strings.Cut(kv, "@")
		prov := map[string]any{"capability": k, "version": v}
		if ms := p.methods[k]; ms != nil {
			prov["methods"] = ms
		}
		provides = append(provides, prov)
	}
	for _, r := range p.requires {
		k, c, _ := strings.Cut(r, " ")
		opt := strings.HasSuffix(c, "?")
		requires = append(requires, map[string]any{"capability": k, "version": strings.TrimSuffix(c, "?"), "optional": opt})
	}
	runtime := map[string]any{"command": "./bin/plugin", "required": p.required, "priority": p.priority,
		"intercepts": nonNil(p.intercepts), "replaces": nonNil(p.replaces), "env": env, "handshake_timeout": handshake}
	if p.contributes != nil {
		runtime["contributes"] = p.contributes
	}
	return map[string]any{
		"format": 1, "name": p.name, "version": version, "runtime": runtime,
		"provides": nonNilMaps(provides), "requires": nonNilMaps(requires),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilMaps(s []map[string]any) []map[string]any {
	if s == nil {
		return []map[string]any{}
	}
	return s
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func linkOrCopy(t testing.TB, src, dst string) {
	t.Helper()
	if os.Link(src, dst) == nil {
		return
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// testConfig returns a config for home with the usual test points and slots.
func testConfig(home string) config.Config {
	return config.Config{
		Home:         home,
		Host:         protocol.HostInfo{Name: "test-host", Version: "1.0.0"},
		Capabilities: []capability.Provided{{Key: "host.log", Version: semver.MustParse("1.0.0")}},
		Points:       []contribution.Point{"tool.before", "tool.after"},
		Slots:        []contribution.Slot{"context.compactor"},
		Logger:       hclog.NewNullLogger(),
	}
}

// children returns the pids of this test process's children.
func children(t testing.TB) []int {
	t.Helper()
	pids, ok := proctest.Children(os.Getpid())
	if !ok {
		t.Skip("no /proc to check for leftover processes")
	}
	return pids
}

// noChildren fails the test if any child process of the test remains.
func noChildren(t *testing.T) {
	t.Helper()
	if kids := children(t); len(kids) > 0 {
		t.Errorf("child processes left behind: %v", kids)
	}
}

// runningClients returns the sidecars of the members of k's current
// generation that have one, in name order.
func runningClients(k *Kernel) []*sidecar.Client {
	l := k.current.Load()
	var out []*sidecar.Client
	for _, m := range l.gen.Members() {
		if c := l.client(m.Package.Name); c != nil {
			out = append(out, c)
		}
	}
	return out
}

// clientNamed returns plugin's sidecar in k's current generation, or nil.
func clientNamed(k *Kernel, plugin string) *sidecar.Client {
	if l := k.current.Load(); l != nil {
		return l.client(plugin)
	}
	return nil
}
