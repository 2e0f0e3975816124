package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/proctest"
)

// These tests call across languages through the kernel, with real
// processes: the polyglot plugins of testdata/plugins/polyglot, written
// with the Go, Python and Node.js SDKs as a plugin author would, call one
// another and the host (capability/call).

// polyglotDir holds the polyglot plugins' sources.
const polyglotDir = "../testdata/plugins/polyglot"

var (
	polyglotOnce sync.Once
	polyglotBin  string // the Go polyglot plugin, built next to scriptedBin
	polyglotErr  error
)

// goPolyglot builds the Go polyglot plugin once per test binary, into the
// directory TestMain removes.
func goPolyglot(t testing.TB) string {
	t.Helper()
	polyglotOnce.Do(func() {
		bin := filepath.Join(filepath.Dir(scriptedBin), "polyglot")
		out, err := exec.Command("go", "build", "-o", bin, polyglotDir).CombinedOutput()
		if err != nil {
			polyglotErr = fmt.Errorf("go build %s: %v\n%s", polyglotDir, err, out)
		}
		polyglotBin = bin
	})
	if polyglotErr != nil {
		t.Fatal(polyglotErr)
	}
	return polyglotBin
}

// lang is one SDK's polyglot plugin: the interpreter it runs with ("" for
// the built Go binary), its script and its SDK's one file, copied into
// the package.
type lang struct {
	name, interpreter, script, sdk string
}

var (
	goLang     = lang{name: "go"}
	pythonLang = lang{name: "python", interpreter: "python3", script: "polyglot.py", sdk: "../sdk/python/extkernel.py"}
	nodeLang   = lang{name: "node", interpreter: "node", script: "polyglot.js", sdk: "../sdk/node/extkernel.js"}
)

// polyPlug is a polyglot package in one language.
type polyPlug struct {
	plug
	lang lang
}

// polyglot returns the package name in language l: it provides provides
// ("key@version"), each with the method "run" mapped to its provider
// "run", and requires requires ("key constraint", "?" for optional).
func polyglot(l lang, name string, provides []string, requires ...string) polyPlug {
	p := plug{name: name, bin: scriptedBin, provides: provides, requires: requires, handshake: "20s",
		env:     map[string]string{"POLYGLOT_PROVIDES": strings.Join(provides, ","), "PYTHONDONTWRITEBYTECODE": "1"},
		methods: map[string]map[string]string{}}
	for _, kv := range provides {
		key, _, _ := strings.Cut(kv, "@")
		p.methods[key] = map[string]string{"run": "run"}
	}
	return polyPlug{plug: p, lang: l}
}

// writePolyglotHome writes a home of polyglot packages. A Go package runs
// the built plugin; a Python or Node.js one runs its interpreter (found
// with proctest.Interpreter, which skips or fails the test without it) on
// its script, the SDK copied next to it.
func writePolyglotHome(t *testing.T, ps ...polyPlug) string {
	t.Helper()
	plugs := make([]plug, len(ps))
	for i, p := range ps {
		plugs[i] = p.plug
		if p.lang.interpreter == "" {
			plugs[i].bin = goPolyglot(t)
		} else {
			proctest.Interpreter(t, p.lang.interpreter)
		}
	}
	home := writeHome(t, plugs...)
	for _, p := range ps {
		if p.lang.interpreter == "" {
			continue
		}
		dir := filepath.Join(home, "packages", p.name)
		m := manifest(p.plug)
		rt := m["runtime"].(map[string]any)
		rt["command"], rt["args"] = p.lang.interpreter, []string{p.lang.script}
		writeJSON(t, filepath.Join(dir, "plugin.json"), m)
		for _, src := range []string{filepath.Join(polyglotDir, p.lang.script), p.lang.sdk} {
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return home
}

// polyglotHome is the home the matrix runs in: one plugin per language
// (go-a, py, js), each providing poly.<name> and requiring the host's
// host.log and the others' capabilities (a cycle: a warning), and go-b,
// a second Go plugin, a callee only. Each caller also requires the
// optional telemetry, which nothing provides.
func polyglotHome(t *testing.T) string {
	return writePolyglotHome(t,
		polyglot(goLang, "go-a", []string{"poly.go-a@1.0.0"}, "host.log ^1.0", "poly.go-b ^1.0", "poly.py ^1.0", "poly.js ^1.0", "telemetry ^1.0?"),
		polyglot(goLang, "go-b", []string{"poly.go-b@1.0.0"}),
		polyglot(pythonLang, "py", []string{"poly.py@1.0.0"}, "host.log ^1.0", "poly.go-a ^1.0", "poly.js ^1.0", "telemetry ^1.0?"),
		polyglot(nodeLang, "js", []string{"poly.js@1.0.0"}, "host.log ^1.0", "poly.go-a ^1.0", "poly.py ^1.0", "telemetry ^1.0?"),
	)
}

// polyCall is the script that makes a polyglot plugin call method "run"
// of key with input (a script for the callee, or any JSON).
func polyCall(key, method, input string) string {
	return fmt.Sprintf(`{"call":{"capability":%q,"method":%q,"input":%s}}`, key, method, input)
}

// polyOutcome is a polyglot plugin's answer to a call script.
type polyOutcome struct {
	Output json.RawMessage `json:"output"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Type string `json:"type"`
}

func (o polyOutcome) String() string {
	if o.Error != nil {
		return fmt.Sprintf("%s %d: %s", o.Type, o.Error.Code, o.Error.Message)
	}
	return string(o.Output)
}

// runPoly runs script on plugin's provider "run" and decodes the outcome
// of the call it makes.
func runPoly(t *testing.T, ctx context.Context, k *Kernel, plugin, script string) polyOutcome {
	t.Helper()
	out, err := k.CallProvider(ctx, "plugin/"+plugin+"/run", json.RawMessage(script))
	if err != nil {
		t.Fatalf("CallProvider(%s, %s): %v", plugin, script, err)
	}
	var o polyOutcome
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("outcome %s: %v", out, err)
	}
	return o
}

// compactJSON is s compacted, for comparing outputs.
func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCallsAcrossLanguages holds that an authorized call is served
// whatever the languages of caller and callee: the host's handler called
// from each language, each language called from Go, and Python and
// Node.js calling each other; and that each SDK surfaces a refusal as its
// typed protocol error: a capability the manifest does not require
// (-32005) and an optional requirement nothing satisfies (-32006).
func TestCallsAcrossLanguages(t *testing.T) {
	k := startKernel(t, callConfig(polyglotHome(t)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	echo := func(lang, plugin string) string {
		return fmt.Sprintf(`{"echo":"hi","lang":%q,"plugin":%q}`, lang, plugin)
	}
	host := func(caller string) string {
		return fmt.Sprintf(`{"caller":%q,"capability":"host.log","generation":1,"input":{"line":"hi"},"method":"write"}`, caller)
	}
	typed := map[string]string{"go-a": "*protocol.Error", "py": "ProtocolError", "js": "ProtocolError"}
	tests := []struct {
		name, caller, script, want string
	}{
		{"go → host", "go-a", polyCall("host.log", "write", `{"line":"hi"}`), host("go-a")},
		{"python → host", "py", polyCall("host.log", "write", `{"line":"hi"}`), host("py")},
		{"node → host", "js", polyCall("host.log", "write", `{"line":"hi"}`), host("js")},
		{"go → go", "go-a", polyCall("poly.go-b", "run", `{"echo":"hi"}`), echo("go", "go-b")},
		{"go → python", "go-a", polyCall("poly.py", "run", `{"echo":"hi"}`), echo("python", "py")},
		{"go → node", "go-a", polyCall("poly.js", "run", `{"echo":"hi"}`), echo("node", "js")},
		{"python → node", "py", polyCall("poly.js", "run", `{"echo":"hi"}`), echo("node", "js")},
		{"node → python", "js", polyCall("poly.py", "run", `{"echo":"hi"}`), echo("python", "py")},
		{"python → go", "py", polyCall("poly.go-a", "run", `{"echo":"hi"}`), echo("go", "go-a")},
		{"node → go", "js", polyCall("poly.go-a", "run", `{"echo":"hi"}`), echo("go", "go-a")},
	}
	for _, caller := range []string{"go-a", "py", "js"} {
		tests = append(tests, struct{ name, caller, script, want string }{
			caller + " not authorized", caller, polyCall("billing", "charge", `{}`),
			fmt.Sprintf(`%s -32005: plugin %q may not call "billing.charge": its manifest does not require capability "billing"`, typed[caller], caller),
		}, struct{ name, caller, script, want string }{
			caller + " optional unsatisfied", caller, polyCall("telemetry", "send", `{}`),
			fmt.Sprintf(`%s -32006: capability "telemetry" is not available to plugin %q (call of "telemetry.send"): optional requirement not satisfied`, typed[caller], caller),
		})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runPoly(t, ctx, k, tt.caller, tt.script)
			got := o.String()
			if o.Error == nil {
				got = compactJSON(t, got)
			}
			if got != tt.want {
				t.Errorf("outcome = %s\nwant      %s", got, tt.want)
			}
		})
	}
}

// nest is the script for chain[0] that calls chain[1], which calls
// chain[2], and so on, each call naming its parent; the last one echoes
// "deep".
func nest(chain []string) string {
	script := `{"echo":"deep"}`
	for i := len(chain) - 1; i >= 1; i-- {
		script = polyCall("poly."+chain[i], "run", script)
	}
	return script
}

// TestReentrantCallsAcrossLanguages holds that A → B → A works across
// languages: the SDK of each plugin keeps serving the host while one of
// its handlers waits for its own call, and serves the call back into it.
func TestReentrantCallsAcrossLanguages(t *testing.T) {
	k := startKernel(t, callConfig(polyglotHome(t)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	langs := map[string]string{"go-a": "go", "py": "python", "js": "node"}
	tests := [][]string{
		{"go-a", "py", "go-a"},
		{"py", "js", "py"},
		{"js", "go-a", "js"},
		{"go-a", "js", "py", "go-a", "py"},
	}
	for _, chain := range tests {
		t.Run(strings.Join(chain, " → "), func(t *testing.T) {
			o := runPoly(t, ctx, k, chain[0], nest(chain))
			for range len(chain) - 2 { // each call's outcome wraps the next one's
				if o.Error != nil {
					t.Fatalf("outer outcome %s, want an output", o)
				}
				if err := json.Unmarshal(o.Output, &o); err != nil {
					t.Fatalf("nested outcome %s: %v", o.Output, err)
				}
			}
			last := chain[len(chain)-1]
			want := fmt.Sprintf(`{"echo":"deep","lang":%q,"plugin":%q}`, langs[last], last)
			if o.Error != nil || compactJSON(t, string(o.Output)) != want {
				t.Errorf("innermost outcome = %s\nwant                 %s", o, want)
			}
		})
	}
}

// TestCancellationAcrossLanguages holds that cancelling the host's call
// reaches the innermost plugin of a chain across languages, a Python or a
// Node.js one: blocked in its handler, it sees its request cancelled long
// before any timeout would end it.
func TestCancellationAcrossLanguages(t *testing.T) {
	k := startKernel(t, callConfig(polyglotHome(t)))
	events := notices(t, k)
	tests := [][]string{
		{"go-a", "js", "py"},
		{"go-a", "py", "js"},
		{"py", "go-a", "js"},
	}
	for _, chain := range tests {
		t.Run(strings.Join(chain, " → "), func(t *testing.T) {
			innermost := chain[len(chain)-1]
			script := nest(chain[:len(chain)-1])
			block := polyCall("poly."+innermost, "run", `{"notify":"blocking","block":true}`)
			script = strings.Replace(script, `{"echo":"deep"}`, block, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // bounds a failed test
			defer cancel()
			errs := make(chan error, 1)
			go func() {
				_, err := k.CallProvider(ctx, "plugin/"+chain[0]+"/run", json.RawMessage(script))
				errs <- err
			}()
			awaitNotice(t, events, innermost, "blocking", 30*time.Second)
			cancel()
			// The default provider deadline is 30s: a "cancelled" seen
			// within 10s came from the host's cancellation.
			awaitNotice(t, events, innermost, "cancelled", 10*time.Second)
			var err error
			select {
			case err = <-errs:
			case <-time.After(30 * time.Second):
				t.Fatal("the host's call did not return")
			}
			var pe *PluginError
			if !errors.As(err, &pe) || !errors.Is(err, context.Canceled) {
				t.Errorf("CallProvider = %v, want a *PluginError wrapping context.Canceled", err)
			}
		})
	}
}
