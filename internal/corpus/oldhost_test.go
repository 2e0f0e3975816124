package corpus

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/proctest"
)

// oldHostVersion is the oldest protocol version a host still supported
// speaks (docs/compatibility.md, section 1).
const oldHostVersion = "1.0.0"

// TestCurrentSDKWithOldHost starts plugins of the current SDKs (the Go
// one built from testdata/corpus/current/go-sdk, the Python and Node
// SDKs' examples) under a host that speaks protocol 1.0.0, as hosts
// before 1.1 did: the kernel's host side cannot be made to speak an older
// version (protocol.Version is a constant, and a 1.0 host's code is not
// kept), so the test is that host, sending exactly 1.0's initialize and
// calls. Each plugin must answer initialize with major 1 and without what
// 1.0 did not have (contributions), answer every declaration's call
// (cancelled if it runs on), never send a 1.0 host a request it lacks
// (capability/call), and stop at shutdown and end of input.
func TestCurrentSDKWithOldHost(t *testing.T) {
	proctest.Interpreter(t, "python3")
	proctest.Interpreter(t, "node")
	work := t.TempDir()
	goDir := filepath.Join(work, "go-sdk")
	copyDir(t, filepath.Join(root, "testdata", "corpus", "current", "go-sdk"), goDir)
	build := exec.Command("go", "build", "-o", filepath.Join(goDir, "plugin"), "./testdata/corpus/current/go-sdk")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build go-sdk: %v\n%s", err, out)
	}
	for _, lang := range []string{"python", "node"} {
		copyDir(t, filepath.Join(root, "sdk", lang), filepath.Join(work, lang))
	}
	plugins := []struct {
		name, dir string
		argv      []string
	}{
		{"go-sdk", goDir, []string{"./plugin"}},
		{"example-python", filepath.Join(work, "python"), []string{"python3", "example_plugin.py"}},
		{"example-node", filepath.Join(work, "node"), []string{"node", "example_plugin.js"}},
	}
	for _, p := range plugins {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			h := startOldHost(t, p.dir, p.argv)
			h.session(t, p.name)
		})
	}
}

// oldHost is a protocol 1.0.0 host of one plugin process.
type oldHost struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	frames chan map[string]any // what the plugin wrote on stdout; closed at its end
	nextID int
}

func startOldHost(t *testing.T, dir string, argv []string) *oldHost {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	cmd.WaitDelay = 2 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", argv[0], err)
	}
	h := &oldHost{cmd: cmd, stdin: stdin, frames: make(chan map[string]any, 64), nextID: 1}
	go func() {
		defer close(h.frames)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparsable": sc.Text()}
			}
			h.frames <- m
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("plugin stderr:\n%s", stderr.String())
		}
	})
	return h
}

// send writes a request and returns its id.
func (h *oldHost) send(t *testing.T, method string, params any) int {
	t.Helper()
	id := h.nextID
	h.nextID++
	h.write(t, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return id
}

func (h *oldHost) write(t *testing.T, msg map[string]any) {
	t.Helper()
	data, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.stdin.Write(append(data, '\n')); err != nil {
		t.Fatalf("write %v: %v", msg["method"], err)
	}
}

// await reads frames until every id of want is answered or the deadline
// passes, answering the plugin's requests as a 1.0 host: capability/call
// did not exist (-32601, and an error of the test). At cancelAfter, the
// calls still unanswered get $/cancel. It returns the answers by id.
func (h *oldHost) await(t *testing.T, want []int, cancelAfter time.Duration) map[int]map[string]any {
	t.Helper()
	got := map[int]map[string]any{}
	cancel := time.After(cancelAfter)
	deadline := time.After(cancelAfter + 5*time.Second)
	for len(got) < len(want) {
		select {
		case m, ok := <-h.frames:
			if !ok {
				t.Fatalf("the plugin closed stdout with %d of %d answers", len(got), len(want))
			}
			h.frame(t, m, got)
		case <-cancel:
			for _, id := range want {
				if got[id] == nil {
					h.write(t, map[string]any{"jsonrpc": "2.0", "method": "$/cancel", "params": map[string]any{"id": id}})
				}
			}
		case <-deadline:
			t.Fatalf("%d of %d requests unanswered (answers: %v)", len(want)-len(got), len(want), got)
		}
	}
	return got
}

func (h *oldHost) frame(t *testing.T, m map[string]any, got map[int]map[string]any) {
	t.Helper()
	method, _ := m["method"].(string)
	id, hasID := m["id"]
	switch {
	case m["unparsable"] != nil:
		t.Errorf("stdout: not JSON: %v", m["unparsable"])
	case method != "" && hasID:
		t.Errorf("the plugin sent a %s host the request %s, which it does not have", oldHostVersion, method)
		h.write(t, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": "method not found: " + method}})
	case method != "":
		// A notification: a 1.0 host ignores those it does not know
		// ($/progress of 1.3 included, protocol.md §8).
	default:
		n, ok := id.(float64)
		if !ok {
			t.Errorf("a response without a numeric id: %v", m)
			return
		}
		got[int(n)] = m
	}
}

// session runs the whole 1.0 conversation with the plugin.
func (h *oldHost) session(t *testing.T, name string) {
	init := h.send(t, "initialize", map[string]any{
		"protocol_version": oldHostVersion,
		"host":             map[string]any{"name": "old-host", "version": "0.1.0"},
		"plugin":           map[string]any{"name": name, "version": "1.0.0", "data_dir": t.TempDir()},
	})
	res := answerResult(t, "initialize", h.await(t, []int{init}, 10*time.Second)[init])
	if v, _ := res["protocol_version"].(string); !strings.HasPrefix(v, "1.") {
		t.Errorf("initialize: protocol_version %q, want major 1", v)
	}
	if _, ok := res["contributions"]; ok {
		t.Errorf("initialize: contributions declared to a %s host (protocol 1.1 added them)", oldHostVersion)
	}
	var calls []int
	for _, d := range list(res, "interceptors") {
		calls = append(calls, h.send(t, "intercept", map[string]any{"point": d["point"], "payload": nil}))
	}
	for _, d := range list(res, "providers") {
		calls = append(calls, h.send(t, "provider/invoke", map[string]any{"ref": d["ref"], "input": nil}))
	}
	for _, d := range list(res, "actions") {
		calls = append(calls, h.send(t, "action/run", map[string]any{"id": d["id"]}))
	}
	if len(calls) < 3 {
		t.Errorf("initialize: %d declarations, want an interceptor, providers and an action: %v", len(calls), res)
	}
	answers := h.await(t, calls, time.Second)
	for _, id := range calls {
		if a := answers[id]; a["result"] == nil && a["error"] == nil {
			t.Errorf("call %d: neither result nor error: %v", id, a)
		}
	}
	ping := h.send(t, "ping", map[string]any{})
	answerResult(t, "ping", h.await(t, []int{ping}, 3*time.Second)[ping])
	stop := h.send(t, "shutdown", map[string]any{})
	answerResult(t, "shutdown", h.await(t, []int{stop}, 3*time.Second)[stop])
	h.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after shutdown: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the plugin did not exit within 5 s of shutdown and end of input")
	}
}

// answerResult returns an answer's result object, failing t on an error answer.
func answerResult(t *testing.T, what string, answer map[string]any) map[string]any {
	t.Helper()
	res, ok := answer["result"].(map[string]any)
	if !ok {
		t.Fatalf("%s: answered %v, want a result object", what, answer)
	}
	return res
}

// list returns the objects of a declaration list of initialize's result.
func list(res map[string]any, key string) []map[string]any {
	var out []map[string]any
	items, _ := res[key].([]any)
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}
