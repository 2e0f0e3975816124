package sdktest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// wellBehaved are the well-behaved plugins of the repository, as packages:
// the suite must pass them all (warnings allowed).
func wellBehaved() []struct {
	name, src   string
	files       []string
	links       map[string]string
	interpreter string
} {
	demo := func(name string) (string, string, []string, map[string]string, string) {
		return name, "testdata/demo/home/packages/" + name, nil, map[string]string{"bin/" + name: name}, ""
	}
	type pkg = struct {
		name, src   string
		files       []string
		links       map[string]string
		interpreter string
	}
	d := func(n string) pkg {
		name, src, files, links, interp := demo(n)
		return pkg{name, src, files, links, interp}
	}
	return []pkg{
		{"good", "testdata/plugins/good", nil, map[string]string{"good": "good"}, ""},
		{"well-behaved", "testdata/plugins/well-behaved", nil, map[string]string{"faulty": "faulty"}, ""},
		d("audit"), d("kvstore"), d("kvstore-next"), d("memory"), d("redactor"),
		{"example-python", "sdk/python", []string{"example_plugin.py", "extkernel.py"}, nil, "python3"},
		{"example-node", "sdk/node", []string{"example_plugin.js", "extkernel.js"}, nil, "node"},
	}
}

// TestWellBehaved runs the suite on every well-behaved plugin of the
// repository: no case fails, and none is skipped.
func TestWellBehaved(t *testing.T) {
	for _, p := range wellBehaved() {
		t.Run(p.name, func(t *testing.T) {
			if p.interpreter != "" {
				needInterpreter(t, p.interpreter)
			}
			dir := pkgDir(t, p.name, p.src, p.files, p.links)
			rep := Check(t, dir, Options{})
			for _, c := range rep.Cases {
				if c.Status == Skip {
					t.Errorf("case %s skipped: %s", c.Name, c.Reason)
				}
			}
			noChildren(t)
		})
	}
}

// TestReportGood holds the whole report of the good plugin: every case,
// in order, passed.
func TestReportGood(t *testing.T) {
	dir := pkgDir(t, "good", "testdata/plugins/good", nil, map[string]string{"good": "good"})
	rep, err := Run(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"manifest", "handshake", "declarations", "ping",
		"call/intercept/tool.before", "call/strategy/context.compactor",
		"call/provider/block", "call/provider/echo", "call/provider/env", "call/provider/fail", "call/provider/notify", "call/provider/progress",
		"call/action/greet", "callbacks", "cancel",
		"stream/provider/block", "stream/provider/echo", "stream/provider/env", "stream/provider/fail", "stream/provider/notify", "stream/provider/progress",
		"unknown-method", "malformed", "shutdown", "group", "stdout", "stderr"}
	var got []string
	for _, c := range rep.Cases {
		got = append(got, c.Name)
		if c.Status != Pass {
			t.Errorf("%s: %s: %s", c.Name, c.Status, c.Reason)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cases:\n got %v\nwant %v", got, want)
	}
	if rep.Plugin != "good" || rep.Version != "1.0.0" || rep.Dir != dir {
		t.Errorf("report identity = %q %q %q", rep.Plugin, rep.Version, rep.Dir)
	}
	noChildren(t)
}

// TestFaults runs the suite on the fault plugins of testdata/plugins: each
// fails the case it is built to fail.
func TestFaults(t *testing.T) {
	faulty := map[string]string{"faulty": "faulty"}
	tests := []struct {
		plugin string
		fails  string
		files  []string
		links  map[string]string
	}{
		{"banner", "stdout", nil, faulty},
		{"invalid-json", "stdout", nil, faulty},
		{"duplicate-id", "stdout", nil, faulty},
		{"no-handshake", "handshake", nil, faulty},
		{"slow-handshake", "handshake", nil, faulty},
		{"exit-early", "handshake", nil, faulty},
		{"wrong-id", "handshake", nil, faulty},
		{"request-first", "handshake", nil, faulty},
		{"init-error", "handshake", nil, faulty},
		{"bad-version", "handshake", nil, faulty},
		{"undeclared", "declarations", nil, faulty},
		{"old-kernel", "manifest", nil, faulty},
		{"hang", "ping", nil, faulty},
		{"stop-reading", "ping", nil, faulty},
		{"no-answer", "unknown-method", nil, faulty},
		{"crash-in-call", "unknown-method", nil, faulty},
		{"close-stdout", "unknown-method", nil, faulty},
		{"ignore-sigterm", "shutdown", nil, faulty},
		{"grandchild", "group", nil, faulty},
		{"shell", "group", []string{"plugin.sh"}, nil},
	}
	// The runs mostly wait on bounds: they run at once, a few at a time.
	reports, errs := make([]Report, len(tests)), make([]error, len(tests))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 6)
	for i, tt := range tests {
		dir := pkgDir(t, tt.plugin, "testdata/plugins/"+tt.plugin, tt.files, tt.links)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			reports[i], errs[i] = Run(context.Background(), dir, Options{HandshakeTimeout: time.Second, CallTimeout: time.Second})
		}()
	}
	wg.Wait()
	noChildren(t)
	for i, tt := range tests {
		t.Run(tt.plugin, func(t *testing.T) {
			rep := reports[i]
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if st := statuses(rep); st[tt.fails] != Fail {
				t.Errorf("case %s = %s, want fail; report:\n%s", tt.fails, st[tt.fails], dump(rep))
			}
			if !rep.Failed() {
				t.Error("Failed() = false")
			}
		})
	}
}

func dump(rep Report) string {
	var b strings.Builder
	for _, c := range rep.Cases {
		b.WriteString("  " + c.Name + " " + string(c.Status) + ": " + c.Reason + "\n")
	}
	return b.String()
}

// TestRunErrors checks the errors that are not about the plugin.
func TestRunErrors(t *testing.T) {
	file := filepath.Join(repo, "testdata/plugins/good/plugin.json")
	for _, dir := range []string{filepath.Join(t.TempDir(), "nosuch"), file} {
		if _, err := Run(context.Background(), dir, Options{}); err == nil {
			t.Errorf("Run(%s) succeeded", dir)
		}
	}
}

// TestContextEnds cancels Run while it waits for a handshake that never
// comes: Run returns ctx's error at once and leaves no process.
func TestContextEnds(t *testing.T) {
	dir := pkgDir(t, "no-handshake", "testdata/plugins/no-handshake", nil, map[string]string{"faulty": "faulty"})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	rep, err := Run(ctx, dir, Options{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run = %v, want the context's deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run returned after %v", d)
	}
	if st := statuses(rep); st["manifest"] != Pass {
		t.Errorf("manifest = %s, want pass (finished before the end)", st["manifest"])
	}
	noChildren(t)
}

// TestManifestCase checks the packages the kernel would not start.
func TestManifestCase(t *testing.T) {
	tests := []struct {
		name, manifest, reason string
	}{
		{"invalid", `{"format": 1, "name": "Bad"}`, "plugin.json: name:"},
		{"declarative", `{"format": 1, "name": "decl", "version": "1.0.0"}`, "a declarative package"},
		{"missing-command", `{"format": 1, "name": "gone", "version": "1.0.0", "runtime": {"command": "./bin/gone"}}`, "runtime.command:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "plugin.json"), tt.manifest)
			rep, err := Run(context.Background(), dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Cases) != len(caseOrder) {
				t.Fatalf("%d cases, want %d:\n%s", len(rep.Cases), len(caseOrder), dump(rep))
			}
			if c := rep.Cases[0]; c.Name != "manifest" || c.Status != Fail || !strings.Contains(c.Reason, tt.reason) {
				t.Errorf("first case = %+v, want manifest failed with %q", c, tt.reason)
			}
			for _, c := range rep.Cases[1:] {
				if c.Status != Skip {
					t.Errorf("%s = %s, want skip", c.Name, c.Status)
				}
			}
		})
	}
}

// TestJudgeLine checks how each stderr line is judged (§1).
func TestJudgeLine(t *testing.T) {
	tests := []struct {
		name, line string
		n          int // 0: len(line)
		want       string
	}{
		{"plain", "starting up", 0, ""},
		{"hclog", `{"@level":"info","@message":"ready","k":1}`, 0, ""},
		{"hclog without level", `{"@message":"ready"}`, 0, ""},
		{"bad level", `{"@level":"loud","@message":"x"}`, 0, "@level loud is not"},
		{"no message", `{"level":"info","msg":"x"}`, 0, "without a string @message"},
		{"frame", `{"jsonrpc":"2.0","id":1,"result":{}}`, 0, "a JSON-RPC message on stderr"},
		{"broken json", `{"@message": "x"`, 0, "is not a JSON object"},
		{"not utf-8", "caf\xe9", 0, "not valid UTF-8"},
		{"long", "x", hostLogPiece + 1, "cut in pieces of 16 KiB"},
		{"too long", "x", hostLogRecord + 1, "the host does not log it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.n
			if n == 0 {
				n = len(tt.line)
			}
			got := judgeLine([]byte(tt.line), n)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("judgeLine(%q) = %q, want %q", tt.line, got, tt.want)
			}
		})
	}
}

// TestStderrLog feeds lines, a long one among them, through the reader.
func TestStderrLog(t *testing.T) {
	var l stderrLog
	input := "one\n\n" + strings.Repeat("x", hostLogRecord+10) + "\n{\"@message\":\"ok\"}\r\nlast"
	l.read(strings.NewReader(input))
	problems, more, lines := l.findings()
	if lines != 4 || more != 0 || len(problems) != 1 || !strings.HasPrefix(problems[0], "line 2: ") {
		t.Errorf("findings = %q, %d more, %d lines", problems, more, lines)
	}
	if tail := l.lastLines(); len(tail) != 3 || tail[2] != "last" || tail[1] != `{"@message":"ok"}` {
		t.Errorf("lastLines = %q", tail)
	}
}

// TestCheckDecision checks how an intercept result is judged (§5.2).
func TestCheckDecision(t *testing.T) {
	tests := []struct{ result, want string }{
		{`{"decision":"continue"}`, ""},
		{`{"decision":"deny","reason":"no"}`, ""},
		{`{"decision":"modify","payload":null}`, ""},
		{`{"decision":"modify"}`, "without a payload"},
		{`{"decision":"allow"}`, `decision "allow" is not`},
		{`{"output":null}`, `decision "" is not`},
		{`"continue"`, "not an object"},
	}
	for _, tt := range tests {
		got := checkDecision([]byte(tt.result))
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("checkDecision(%s) = %q, want %q", tt.result, got, tt.want)
		}
	}
}

// TestStartsAsTheKernel checks what the plugin gets: the package directory
// as working directory, the kernel's environment (allowlisted host
// variables, the manifest's env, Options.Env, the EXTKERNEL_* variables,
// nothing else of the host's), and Options' config and data directory in
// initialize.
func TestStartsAsTheKernel(t *testing.T) {
	t.Setenv("SDKTEST_HOST_ONLY", "leaked")
	dir := filepath.Join(t.TempDir(), "probe")
	writeFile(t, filepath.Join(dir, "plugin.json"),
		`{"format": 1, "name": "probe", "version": "1.2.3", "runtime": {"command": "sh", "args": ["probe.sh"], "env": {"FROM_MANIFEST": "m"}}}`)
	writeFile(t, filepath.Join(dir, "probe.sh"), "env > \"$EXTKERNEL_DATA_DIR/env\"\npwd > \"$EXTKERNEL_DATA_DIR/pwd\"\nread -r line\necho \"$line\" > \"$EXTKERNEL_DATA_DIR/init\"\n")
	data := filepath.Join(t.TempDir(), "data", "probe")
	rep, err := Run(context.Background(), dir, Options{Config: []byte(`{"k":"v"}`), Env: map[string]string{"FROM_OPTIONS": "o"}, DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	if st := statuses(rep); st["handshake"] != Fail {
		t.Errorf("handshake = %s, want fail (the probe exits)", st["handshake"])
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(data, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	env := read("env")
	for _, want := range []string{"FROM_MANIFEST=m\n", "FROM_OPTIONS=o\n", "EXTKERNEL_PLUGIN_NAME=probe\n",
		"EXTKERNEL_PLUGIN_VERSION=1.2.3\n", "EXTKERNEL_PLUGIN_DIR=" + dir + "\n", "EXTKERNEL_DATA_DIR=" + data + "\n",
		"EXTKERNEL_PROTOCOL_VERSION=" + protocol.Version + "\n", "PATH="} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %q:\n%s", want, env)
		}
	}
	if strings.Contains(env, "SDKTEST_HOST_ONLY") {
		t.Errorf("the host's environment leaked:\n%s", env)
	}
	if pwd := strings.TrimSpace(read("pwd")); pwd != dir {
		t.Errorf("working directory = %s, want %s", pwd, dir)
	}
	init := read("init")
	for _, want := range []string{`"method":"initialize"`, `"config":{"k":"v"}`, `"data_dir":"` + data + `"`, `"name":"probe","version":"1.2.3"`} {
		if !strings.Contains(init, want) {
			t.Errorf("initialize lacks %s:\n%s", want, init)
		}
	}
	noChildren(t)
}

// TestCallbacksStubHost: a plugin's calls into the host are answered by
// the stub host: a required capability's call gets a null output, one the
// manifest does not require -32005 (the callbacks case warns), and a
// malformed one -32602 (the case fails).
func TestCallbacksStubHost(t *testing.T) {
	h := &stubHost{plugin: "memory", requires: []string{"storage.kv"}}
	h.features.Store(uint32(wire.AllFeatures))
	inFlight := func(id json.RawMessage) bool { return string(id) == "7" }
	tests := []struct {
		name, params string
		code         int
		problem      bool
		refused      bool
	}{
		{"required", `{"capability":"storage.kv","method":"get","input":"k","parent":7}`, 0, false, false},
		{"not required", `{"capability":"billing","method":"charge"}`, protocol.CodeNotAuthorized, false, true},
		{"no method", `{"capability":"storage.kv"}`, protocol.CodeInvalidParams, true, false},
		{"bad method", `{"capability":"storage.kv","method":"Get"}`, protocol.CodeInvalidParams, true, false},
		{"unknown parent", `{"capability":"storage.kv","method":"get","parent":99}`, protocol.CodeInvalidParams, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cb, reply := h.answer(&wire.Message{ID: json.RawMessage(`"c1"`), Params: json.RawMessage(tt.params)}, inFlight)
			code := 0
			if reply.Error != nil {
				code = reply.Error.Code
			} else if string(reply.Result) != `{"output":null}` {
				t.Errorf("result %s, want a null output", reply.Result)
			}
			if code != tt.code || (cb.problem != "") != tt.problem || (cb.refused != "") != tt.refused || string(reply.ID) != `"c1"` {
				t.Errorf("answer %+v (code %d), callback %+v", reply, code, cb)
			}
			// The host's words (docs/protocol.md §5.11), not the stub's.
			if want := `plugin "memory" may not call "billing.charge": its manifest does not require capability "billing"`; tt.refused && reply.Error.Message != want {
				t.Errorf("refusal %q, want the host's %q", reply.Error.Message, want)
			}
		})
	}
}
