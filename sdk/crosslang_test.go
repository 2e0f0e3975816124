package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// These tests run the Python and Node.js example plugins as real processes
// and play the host against them with wire.FrameReader/FrameWriter.

// process is a plugin process and the host's ends of its pipes.
type process struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	fw     *wire.FrameWriter
	msgs   chan *wire.Message
	readEr chan error
	stderr *lockedBuffer
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startProcess starts interpreter with args in dir, with the environment a
// host gives a plugin, or skips the test when interpreter is missing
// (fails it when proctest.RequireInterpretersEnv is 1).
func startProcess(t *testing.T, interpreter, dir string, args ...string) *process {
	t.Helper()
	return startCommand(t, proctest.Interpreter(t, interpreter), dir, nil, args...)
}

// startCommand starts the program at path with args in dir, with the
// environment a host gives a plugin plus env.
func startCommand(t *testing.T, path, dir string, env []string, args ...string) *process {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = abs
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "PYTHONDONTWRITEBYTECODE=1",
		"EXTKERNEL_PLUGIN_NAME=example", "EXTKERNEL_PLUGIN_VERSION=1.0.0", "EXTKERNEL_PLUGIN_DIR=" + abs,
		"EXTKERNEL_DATA_DIR=" + t.TempDir(), "EXTKERNEL_PROTOCOL_VERSION=" + protocol.Version,
	}, env...)
	p := &process{t: t, cmd: cmd, msgs: make(chan *wire.Message, 16), readEr: make(chan error, 1), stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.fw = wire.NewFrameWriter(p.stdin)
	go func() {
		defer close(p.msgs)
		fr := wire.NewFrameReader(stdout, 0)
		for {
			m, err := fr.ReadMessage()
			if err != nil {
				p.readEr <- err
				return
			}
			p.msgs <- m
		}
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil { // the test failed before the exit check
			_ = p.cmd.Process.Kill()
			p.stdin.Close()
			for range p.msgs {
			}
			_ = p.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("plugin stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

func (p *process) send(id any, method string, params any) {
	p.t.Helper()
	var m *wire.Message
	var err error
	if id == nil {
		m, err = wire.NewNotification(method, params)
	} else {
		raw, _ := json.Marshal(id)
		m, err = newRequest(raw, method, params)
	}
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.fw.WriteMessage(m); err != nil {
		p.t.Fatalf("write %s: %v", method, err)
	}
}

func (p *process) recv() *wire.Message {
	p.t.Helper()
	select {
	case m, ok := <-p.msgs:
		if !ok {
			p.t.Fatalf("plugin output ended: %v", <-p.readEr)
		}
		return m
	case <-time.After(waitLimit):
		p.t.Fatal("no message from the plugin")
	}
	return nil
}

// expect checks that the next message answers id with result want (compact
// JSON), or with error code when code != 0.
func (p *process) expect(id int, want string, code int) *wire.Message {
	p.t.Helper()
	m := p.recv()
	switch {
	case string(m.ID) != strconv.Itoa(id):
		p.t.Fatalf("got %s, want the response to %d", frame(m), id)
	case code != 0 && (m.Error == nil || m.Error.Code != code):
		p.t.Fatalf("response %d = %s, want error %d", id, frame(m), code)
	case code == 0 && want != "" && (m.Error != nil || !jsonEqual(m.Result, want)):
		p.t.Fatalf("response %d = %s, want result %s", id, frame(m), want)
	}
	return m
}

func jsonEqual(a json.RawMessage, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

// exit closes stdin after shutdown and checks that the process exits 0.
func (p *process) exit() {
	p.t.Helper()
	p.stdin.Close()
	p.exited()
}

// exited checks that the process closes its stdout, with nothing more
// written, and exits 0.
func (p *process) exited() {
	p.t.Helper()
	select {
	case m, ok := <-p.msgs:
		if ok {
			p.t.Fatalf("unexpected message after shutdown: %s", frame(m))
		}
	case <-time.After(waitLimit):
		p.t.Fatal("plugin did not close its stdout after shutdown")
	}
	if err := <-p.readEr; !errors.Is(err, io.EOF) {
		p.t.Errorf("plugin stdout ended with %v, want EOF", err)
	}
	if err := p.cmd.Wait(); err != nil {
		p.t.Fatalf("plugin exit: %v", err)
	}
}

func TestCrossLanguageExamples(t *testing.T) {
	tests := []struct {
		name, interpreter, dir, script, plugin string
	}{
		{"python", "python3", "python", "example_plugin.py", "example-python"},
		{"node", "node", "node", "example_plugin.js", "example-node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startProcess(t, tt.interpreter, tt.dir, tt.script)
			p.send(1, wire.MethodPing, nil)
			p.expect(1, "", wire.CodeNotInitialized)

			// A 1.0 host: everything but calls works (TestCallScenarios
			// covers a 1.1 host), and a call is refused before anything
			// is sent.
			params := initParams("1.0.0")
			params.Plugin.Name = tt.plugin
			p.send(2, wire.MethodInitialize, params)
			var res protocol.InitializeResult
			if err := json.Unmarshal(p.expect(2, "", 0).Result, &res); err != nil {
				t.Fatal(err)
			}
			wantDecl := protocol.InitializeResult{
				ProtocolVersion: protocol.Version, Name: tt.plugin, Version: "1.0.0",
				Provides:     []protocol.CapabilityDecl{{Capability: "example.redact", Version: "1.0.0"}},
				Interceptors: []protocol.InterceptorDecl{{Point: "tool.before"}},
				Providers: []protocol.ProviderDecl{{Ref: "echo", Description: "returns its input"},
					{Ref: "wordcount", Description: "counts the words of a string"},
					{Ref: "slow", Description: "waits until cancelled (at most 30 s)"},
					{Ref: "recall", Description: "recalls the note on a topic from storage.kv"}},
				Actions:  []protocol.ActionDecl{{ID: "hello", Title: "Say hello", Placement: "toolbar"}},
				Features: wire.AllFeatures.Names(),
			}
			if !reflect.DeepEqual(res, wantDecl) {
				t.Errorf("initialize result\n got %+v\nwant %+v", res, wantDecl)
			}

			p.send(3, wire.MethodIntercept, wire.InterceptParams{Point: "tool.before", Payload: json.RawMessage(`{"command":"API_KEY=xyz make"}`)})
			p.expect(3, `{"decision":"modify","payload":{"command":"API_KEY=[redacted] make"}}`, 0)
			p.send(4, wire.MethodIntercept, wire.InterceptParams{Point: "tool.after"})
			p.expect(4, "", protocol.CodeUnknownTarget)
			p.send(5, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "echo", Input: json.RawMessage(`{"q":[1,"two"]}`)})
			p.expect(5, `{"output":{"q":[1,"two"]}}`, 0)
			p.send(6, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "wordcount", Input: json.RawMessage(`3`)})
			p.expect(6, "", protocol.CodeInvalidParams)

			// A slow call does not hold up ping, and $/cancel ends it.
			p.send(7, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "slow"})
			p.send(8, wire.MethodPing, nil)
			p.expect(8, `{}`, 0)
			p.send(nil, wire.MethodCancel, wire.CancelParams{ID: json.RawMessage(`7`)})
			p.expect(7, "", protocol.CodeRequestCancelled)

			// A 1.0 host: the call is refused before anything is sent.
			p.send(11, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "recall", Input: json.RawMessage(`{"topic":"build"}`)})
			if m := p.expect(11, "", protocol.CodePluginError); !strings.Contains(m.Error.Message, `without the "calls" feature`) {
				t.Errorf("refusal %q does not name the calls feature", m.Error.Message)
			}

			p.send(9, wire.MethodActionRun, wire.ActionRunParams{ID: "hello", Context: json.RawMessage(`"ann"`)})
			if m := p.recv(); m.Method != wire.MethodNotify || !jsonEqual(m.Params, `{"event":"greeted","data":{"who":"ann"}}`) {
				t.Fatalf("got %s, want the greeted notification", frame(m))
			}
			p.expect(9, `{"output":{"greeting":"hello ann"}}`, 0)

			p.send(10, wire.MethodShutdown, nil)
			p.expect(10, `{}`, 0)
			p.exit()
			if log := p.stderr.String(); !strings.Contains(log, `"@message":`) {
				t.Errorf("stderr has no hclog JSON line:\n%s", log)
			}
		})
	}
}

// TestCrossLanguageExampleRecall plays a 1.1 host against the examples'
// recall provider, which calls the storage.kv capability: the call names
// the request as parent, its output is recalled, and a not-available
// answer of the optional requirement is a fallback, not an error.
func TestCrossLanguageExampleRecall(t *testing.T) {
	for _, tt := range []struct{ name, interpreter, dir, script string }{
		{"python", "python3", "python", "example_plugin.py"},
		{"node", "node", "node", "example_plugin.js"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startProcess(t, tt.interpreter, tt.dir, tt.script)
			p.send(1, wire.MethodInitialize, initParams("1.1.0"))
			p.expect(1, "", 0)
			for i, tc := range []struct {
				answer *wire.Message
				want   string
			}{
				{&wire.Message{Result: json.RawMessage(`{"output":"make -j8"}`)}, `{"output":{"recalled":"make -j8"}}`},
				{wire.NewErrorResponse(nil, Errorf(protocol.CodeNotAvailable, "storage.kv is down")),
					`{"output":{"recalled":null,"reason":"storage.kv is down"}}`},
			} {
				id := 2 + i
				p.send(id, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "recall", Input: json.RawMessage(`{"topic":"build"}`)})
				c := expectCall(t, p.recv(), `{"capability":"storage.kv","method":"get","input":{"key":"build"},"parent":`+strconv.Itoa(id)+`}`)
				tc.answer.JSONRPC, tc.answer.ID = wire.JSONRPCVersion, c
				p.write(tc.answer)
				p.expect(id, tc.want, 0)
			}
			p.send(9, wire.MethodShutdown, nil)
			p.expect(9, `{}`, 0)
			p.exit()
		})
	}
}

// TestCrossLanguageEndOfInput closes stdin while a call runs: the SDK
// cancels it at the drain bound, answers -32800 and exits 0.
func TestCrossLanguageEndOfInput(t *testing.T) {
	for _, tt := range []struct{ name, interpreter, dir, script string }{
		{"python", "python3", "python", "example_plugin.py"},
		{"node", "node", "node", "example_plugin.js"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startProcess(t, tt.interpreter, tt.dir, tt.script)
			p.send(1, wire.MethodInitialize, initParams(protocol.Version))
			p.expect(1, "", 0)
			p.send(2, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "slow"})
			p.send(3, wire.MethodPing, nil)
			p.expect(3, `{}`, 0)
			p.stdin.Close()
			m := p.expect(2, "", protocol.CodeRequestCancelled)
			if !strings.Contains(m.Error.Message, "shutting down") {
				t.Errorf("cancel message %q does not say the plugin is shutting down", m.Error.Message)
			}
			p.exit()
		})
	}
}

// TestDocMinimalPlugin runs the dependency-free plugin of docs/protocol.md
// §11, so the spec's example keeps working.
func TestDocMinimalPlugin(t *testing.T) {
	doc, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "## 11. A minimal plugin")
	_, code, ok2 := strings.Cut(after, "```python\n")
	code, _, ok3 := strings.Cut(code, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/protocol.md: no python block in section 11")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.py"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startProcess(t, "python3", dir, "hello.py")
	params := initParams(protocol.Version)
	p.send(1, wire.MethodInitialize, params)
	p.expect(1, `{"protocol_version":"1.0.0","name":"hello","version":"1.0.0","interceptors":[{"point":"tool.before"}]}`, 0)
	p.send(2, wire.MethodIntercept, wire.InterceptParams{Point: "tool.before"})
	p.expect(2, `{"decision":"continue"}`, 0)
	p.send(3, wire.MethodIntercept, wire.InterceptParams{Point: "x"})
	p.expect(3, "", protocol.CodeUnknownTarget)
	p.send(4, wire.MethodShutdown, nil)
	p.expect(4, `{}`, 0)
	p.exit()
}
