package sdk

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// hostEnd is the host's end of a plugin's pipes: a harness (the Go caller
// plugin served in-process) or a process (the caller plugin of an SDK run
// as a real process).
type hostEnd interface {
	write(m *wire.Message)
	next() *wire.Message
	closeInput()
	ended() // checks that the plugin stopped cleanly
}

func (h *harness) write(m *wire.Message) { h.t.Helper(); h.send(m) }
func (h *harness) next() *wire.Message   { h.t.Helper(); return h.recv() }
func (h *harness) closeInput()           { h.inW.Close() }
func (h *harness) ended() {
	h.t.Helper()
	if err := h.wait(); err != nil {
		h.t.Fatalf("ServeIO = %v, want nil", err)
	}
}

func (p *process) write(m *wire.Message) {
	p.t.Helper()
	if err := p.fw.WriteMessage(m); err != nil {
		p.t.Fatalf("write %s: %v", frame(m), err)
	}
}
func (p *process) next() *wire.Message { p.t.Helper(); return p.recv() }
func (p *process) closeInput()         { p.stdin.Close() }
func (p *process) ended()              { p.t.Helper(); p.exited() }

// request sends request id with method and params.
func request(t *testing.T, e hostEnd, id int, method string, params any) {
	t.Helper()
	m, err := newRequest(json.RawMessage(strconv.Itoa(id)), method, params)
	if err != nil {
		t.Fatal(err)
	}
	e.write(m)
}

// relay sends request id invoking provider ref (relay or background) with
// input (compact JSON).
func relay(t *testing.T, e hostEnd, id int, ref, input string) {
	t.Helper()
	request(t, e, id, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: ref, Input: json.RawMessage(input)})
}

// expectResult checks that m answers id with a result equal to want.
func expectResult(t *testing.T, m *wire.Message, id int, want string) {
	t.Helper()
	if string(m.ID) != strconv.Itoa(id) || m.Error != nil || !jsonEqual(m.Result, want) {
		t.Fatalf("got %s, want the result %s to %d", frame(m), want, id)
	}
}

// expectCall checks that m is a capability/call with params equal to want
// and a string id, which it returns.
func expectCall(t *testing.T, m *wire.Message, want string) json.RawMessage {
	t.Helper()
	var id string
	if m.Method != wire.MethodCapabilityCall || json.Unmarshal(m.ID, &id) != nil || !jsonEqual(m.Params, want) {
		t.Fatalf("got %s, want a capability/call with a string id and params %s", frame(m), want)
	}
	return m.ID
}

// expectCancel checks that m is $/cancel for the plugin's request id.
func expectCancel(t *testing.T, m *wire.Message, id json.RawMessage) {
	t.Helper()
	if m.Method != wire.MethodCancel || !m.IsNotification() || !jsonEqual(m.Params, `{"id":`+string(id)+`}`) {
		t.Fatalf("got %s, want $/cancel for %s", frame(m), id)
	}
}

// answer answers the plugin's request id with result (compact JSON).
func answer(t *testing.T, e hostEnd, id json.RawMessage, result string) {
	t.Helper()
	e.write(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: id, Result: json.RawMessage(result)})
}

// answerError answers the plugin's request id with an error.
func answerError(t *testing.T, e hostEnd, id json.RawMessage, code int, message string) {
	t.Helper()
	e.write(wire.NewErrorResponse(id, &protocol.Error{Code: code, Message: message}))
}

// pingNext checks that ping id is answered next: nothing else was sent.
func pingNext(t *testing.T, e hostEnd, id int) {
	t.Helper()
	request(t, e, id, wire.MethodPing, nil)
	expectResult(t, e.next(), id, `{}`)
}

const getBuild = `{"capability":"storage.kv","method":"get","input":{"key":"build"}}`

// callScenario is the host's side of one exchange with the caller plugin.
type callScenario struct {
	name  string
	host  string // the protocol_version the host announces
	ended bool   // run ends the plugin's input itself
	run   func(t *testing.T, e hostEnd)
}

var callScenarios = []callScenario{
	{name: "output and parent", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		relay(t, e, 12, "relay", getBuild)
		c := expectCall(t, e.next(), `{"capability":"storage.kv","method":"get","input":{"key":"build"},"parent":12}`)
		answer(t, e, c, `{"output":"make -j8"}`)
		expectResult(t, e.next(), 12, `{"output":{"got":"make -j8"}}`)

		relay(t, e, 13, "relay", `{"capability":"storage.kv","method":"list"}`)
		c = expectCall(t, e.next(), `{"capability":"storage.kv","method":"list","parent":13}`)
		answer(t, e, c, `{}`)
		expectResult(t, e.next(), 13, `{"output":{"got":null}}`)
	}},
	{name: "traceparent passed on", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		// The host's traceparent reaches the handler and goes on with its
		// call; an invalid one goes nowhere.
		const span = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		request(t, e, 14, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "relay", Input: json.RawMessage(getBuild), Traceparent: span})
		c := expectCall(t, e.next(), `{"capability":"storage.kv","method":"get","input":{"key":"build"},"parent":14,"traceparent":"`+span+`"}`)
		answer(t, e, c, `{"output":1}`)
		expectResult(t, e.next(), 14, `{"output":{"got":1}}`)
		request(t, e, 15, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "relay", Input: json.RawMessage(getBuild), Traceparent: "00-bad"})
		c = expectCall(t, e.next(), `{"capability":"storage.kv","method":"get","input":{"key":"build"},"parent":15}`)
		answer(t, e, c, `{"output":2}`)
		expectResult(t, e.next(), 15, `{"output":{"got":2}}`)
	}},
	{name: "error answers keep their code", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		for i, code := range []int{protocol.CodeNotAuthorized, protocol.CodeNotAvailable, protocol.CodeMethodNotFound,
			wire.CodeDepthExceeded, wire.CodeStaleGeneration, protocol.CodeRequestCancelled, protocol.CodePluginError} {
			relay(t, e, 20+i, "relay", getBuild)
			c := expectCall(t, e.next(), `{"capability":"storage.kv","method":"get","input":{"key":"build"},"parent":`+strconv.Itoa(20+i)+`}`)
			answerError(t, e, c, code, "refused by the test")
			expectResult(t, e.next(), 20+i, `{"output":{"code":`+strconv.Itoa(code)+`,"message":"refused by the test"}}`)
		}
	}},
	{name: "re-entrant requests are served while a call waits", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		relay(t, e, 12, "relay", `{"capability":"storage.kv","method":"get","input":"a"}`)
		outer := expectCall(t, e.next(), `{"capability":"storage.kv","method":"get","input":"a","parent":12}`)
		pingNext(t, e, 13)
		request(t, e, 14, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "echo", Input: json.RawMessage(`"hi"`)})
		expectResult(t, e.next(), 14, `{"output":"hi"}`)
		relay(t, e, 15, "relay", `{"capability":"storage.kv","method":"get","input":"b"}`)
		inner := expectCall(t, e.next(), `{"capability":"storage.kv","method":"get","input":"b","parent":15}`)
		if string(inner) == string(outer) {
			t.Fatalf("two calls in flight have the same id %s", inner)
		}
		answer(t, e, inner, `{"output":"B"}`)
		expectResult(t, e.next(), 15, `{"output":{"got":"B"}}`)
		answer(t, e, outer, `{"output":"A"}`)
		expectResult(t, e.next(), 12, `{"output":{"got":"A"}}`)
	}},
	{name: "cancelling the outer request cancels the call", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		relay(t, e, 12, "relay", getBuild)
		c := expectCall(t, e.next(), `{"capability":"storage.kv","method":"get","input":{"key":"build"},"parent":12}`)
		m, err := wire.NewNotification(wire.MethodCancel, wire.CancelParams{ID: json.RawMessage(`12`)})
		if err != nil {
			t.Fatal(err)
		}
		e.write(m)
		// The answer to 12 and the $/cancel for the call race.
		a, b := e.next(), e.next()
		if a.Method == wire.MethodCancel {
			a, b = b, a
		}
		if string(a.ID) != "12" || a.Error == nil || a.Error.Code != protocol.CodeRequestCancelled {
			t.Fatalf("got %s, want request 12 cancelled", frame(a))
		}
		expectCancel(t, b, c)
		answer(t, e, c, `{"output":"late"}`) // dropped
		pingNext(t, e, 13)
	}},
	{name: "the call's own deadline cancels it", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		relay(t, e, 12, "relay", `{"capability":"storage.kv","method":"get","timeout_ms":50}`)
		c := expectCall(t, e.next(), `{"capability":"storage.kv","method":"get","parent":12}`)
		expectCancel(t, e.next(), c)
		// The host answers the cancelled call (docs/protocol.md §5.8): a
		// plugin may wait for that answer (the Go SDK does when its
		// handler reads for it) or drop it (the others).
		answerError(t, e, c, protocol.CodeRequestCancelled, "cancelled")
		expectResult(t, e.next(), 12, `{"output":{"timeout":true}}`)
		pingNext(t, e, 13)
	}},
	{name: "a 1.0 host is refused locally", host: "1.0.0", run: func(t *testing.T, e hostEnd) {
		relay(t, e, 12, "relay", getBuild)
		m := e.next() // nothing was sent before the answer
		var res struct {
			Output relayReport `json:"output"`
		}
		if string(m.ID) != "12" || m.Error != nil || json.Unmarshal(m.Result, &res) != nil || !strings.Contains(res.Output.Refused, `without the "calls" feature`) {
			t.Fatalf("got %s, want a refusal naming the calls feature", frame(m))
		}
	}},
	{name: "a call outside any handler has no parent", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		relay(t, e, 12, "background", getBuild)
		a, b := e.next(), e.next() // the answer to 12 and the call race
		if a.Method == wire.MethodCapabilityCall {
			a, b = b, a
		}
		expectResult(t, a, 12, `{"output":"started"}`)
		c := expectCall(t, b, `{"capability":"storage.kv","method":"get","input":{"key":"build"}}`)
		answer(t, e, c, `{"output":"make -j8"}`)
		if m := e.next(); m.Method != wire.MethodNotify || !jsonEqual(m.Params, `{"event":"background","data":{"got":"make -j8"}}`) {
			t.Fatalf("got %s, want the background notification", frame(m))
		}
	}},
	{name: "the end of input ends a waiting call", host: "1.1.0", ended: true, run: func(t *testing.T, e hostEnd) {
		relay(t, e, 12, "relay", getBuild)
		expectCall(t, e.next(), `{"capability":"storage.kv","method":"get","input":{"key":"build"},"parent":12}`)
		e.closeInput()
		m := e.next()
		var res struct {
			Output relayReport `json:"output"`
		}
		if string(m.ID) != "12" || m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.Output.Refused == "" {
			t.Fatalf("got %s, want the call refused at the end of input", frame(m))
		}
	}},
}

// sdkUnderTest starts one SDK's plugin for a scenario.
type sdkUnderTest struct {
	name  string
	start func(t *testing.T) hostEnd
}

// runScenarios plays each scenario against a new plugin of each SDK: the
// handshake with the scenario's host version, the scenario, then (unless
// it ended the input itself) shutdown and the end of input; the plugin
// must then end.
func runScenarios(t *testing.T, sdks []sdkUnderTest, scenarios []callScenario) {
	for _, impl := range sdks {
		t.Run(impl.name, func(t *testing.T) {
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					e := impl.start(t)
					request(t, e, 1, wire.MethodInitialize, initParams(sc.host))
					if m := e.next(); string(m.ID) != "1" || m.Error != nil {
						t.Fatalf("initialize: got %s", frame(m))
					}
					sc.run(t, e)
					if !sc.ended {
						request(t, e, 99, wire.MethodShutdown, nil)
						expectResult(t, e.next(), 99, `{}`)
						e.closeInput()
					}
					e.ended()
				})
			}
		})
	}
}

// TestCallScenarios plays every call scenario against the caller plugin of each
// SDK: Go in-process (with an inline bound no handler reaches, so the
// read role moves only because Call hands it over), Go, Python and Node.js
// as real processes.
func TestCallScenarios(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sdks := []sdkUnderTest{
		{"go in-process", func(t *testing.T) hostEnd {
			withBounds(t, bounds{drain: drainWait, cancel: cancelWait, inline: time.Hour})
			return serve(t, callerPlugin(nil))
		}},
		{"go", func(t *testing.T) hostEnd {
			return startCommand(t, exe, ".", []string{callerHelperEnv + "=caller"})
		}},
		{"python", func(t *testing.T) hostEnd { return startProcess(t, "python3", "testdata", "caller.py") }},
		{"node", func(t *testing.T) hostEnd { return startProcess(t, "node", "testdata", "caller.js") }},
	}
	runScenarios(t, sdks, callScenarios)
}

// expectLateReport checks that m is the caller's notify "late" reporting a
// call refused locally: the capability/call naming a request already
// answered was not written (§5.11).
func expectLateReport(t *testing.T, m *wire.Message) {
	t.Helper()
	var n struct {
		Event string      `json:"event"`
		Data  relayReport `json:"data"`
	}
	if m.Method != wire.MethodNotify || json.Unmarshal(m.Params, &n) != nil || n.Event != "late" {
		t.Fatalf("got %s, want the notify \"late\" (no call naming an answered request)", frame(m))
	}
	if r := n.Data; r.Got != nil || r.Timeout || (r.Refused == "" && r.Code != protocol.CodeRequestCancelled) {
		t.Fatalf("late call reported %s, want it refused or cancelled", frame(m))
	}
}

// TestNoCallNamingAnAnsweredRequest checks the script SDKs never write a
// capability/call whose parent they already answered (the host reads it
// as malformed): Python's handler thread, held past its cancel check until
// the host's $/cancel was answered, and a Node.js timer its handler left
// after answering. Each call is refused locally and the plugin goes on.
func TestNoCallNamingAnAnsweredRequest(t *testing.T) {
	python := []sdkUnderTest{{"python", func(t *testing.T) hostEnd { return startProcess(t, "python3", "testdata", "caller.py") }}}
	node := []sdkUnderTest{{"node", func(t *testing.T) hostEnd { return startProcess(t, "node", "testdata", "caller.js") }}}
	runScenarios(t, python, []callScenario{{name: "cancelled while its call is held", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		relay(t, e, 12, "late", getBuild)
		pingNext(t, e, 13) // the handler runs, its call held
		m, err := wire.NewNotification(wire.MethodCancel, wire.CancelParams{ID: json.RawMessage(`12`)})
		if err != nil {
			t.Fatal(err)
		}
		e.write(m)
		if a := e.next(); string(a.ID) != "12" || a.Error == nil || a.Error.Code != protocol.CodeRequestCancelled {
			t.Fatalf("got %s, want request 12 cancelled", frame(a))
		}
		expectLateReport(t, e.next())
		pingNext(t, e, 14)
	}}})
	runScenarios(t, node, []callScenario{{name: "a timer left after the answer", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		relay(t, e, 12, "late", getBuild)
		expectResult(t, e.next(), 12, `{"output":"started"}`)
		expectLateReport(t, e.next())
		pingNext(t, e, 13)
	}}})
}
