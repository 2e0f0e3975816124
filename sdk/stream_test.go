package sdk

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// These tests play the host against the streams test plugin of each SDK
// (testdata/plugins/streamer describes it: the Go one built from there,
// testdata/streamer.py and testdata/streamer.js), frame by frame: the
// window holding the producer back, the host's cancel, the answer without
// a stream, and the plugin consuming a stream of its own call.

// buildStreamer builds testdata/plugins/streamer into a directory of the
// test's.
func buildStreamer(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "streamer")
	if b, err := exec.Command("go", "build", "-o", out, "../testdata/plugins/streamer").CombinedOutput(); err != nil {
		t.Fatalf("go build testdata/plugins/streamer: %v\n%s", err, b)
	}
	return out
}

// chunkParams returns the $/stream/chunk params of chunk seq of the stream of
// request id, as compact JSON.
func chunkParams(id string, seq int, data string) string {
	return `{"id":` + id + `,"seq":` + strconv.Itoa(seq) + `,"data":` + data + `}`
}

// expectChunk checks that m is chunk seq, data, of the stream answering
// request id.
func expectChunk(t *testing.T, m *wire.Message, id string, seq int, data string) {
	t.Helper()
	if m.Method != wire.MethodStreamChunk || !m.IsNotification() || !jsonEqual(m.Params, chunkParams(id, seq, data)) {
		t.Fatalf("got %s, want chunk %d %s of %s", frame(m), seq, data, id)
	}
}

// expectAck checks that m acknowledges the chunks up to seq of the stream
// of the plugin's request id.
func expectAck(t *testing.T, m *wire.Message, id json.RawMessage, seq int) {
	t.Helper()
	if m.Method != wire.MethodStreamAck || !m.IsNotification() || !jsonEqual(m.Params, `{"id":`+string(id)+`,"seq":`+strconv.Itoa(seq)+`}`) {
		t.Fatalf("got %s, want the ack of %d for %s", frame(m), seq, id)
	}
}

// notifyHost sends the notification method with params (compact JSON).
func notifyHost(t *testing.T, e hostEnd, method, params string) {
	t.Helper()
	e.write(&wire.Message{JSONRPC: wire.JSONRPCVersion, Method: method, Params: json.RawMessage(params)})
}

// invokeStream sends provider/invoke id of ref with input, asking for a
// stream of window when window > 0.
func invokeStream(t *testing.T, e hostEnd, id int, ref, input string, window int) {
	t.Helper()
	p := wire.ProviderInvokeParams{Ref: ref, Input: json.RawMessage(input)}
	if window > 0 {
		p.Stream = &wire.StreamParams{Window: window}
	}
	request(t, e, id, wire.MethodProviderInvoke, p)
}

// invokeStreamBytes sends provider/invoke id of ref with input, asking for
// a stream of window chunks and windowBytes bytes (protocol 1.2).
func invokeStreamBytes(t *testing.T, e hostEnd, id int, ref, input string, window int, windowBytes int64) {
	t.Helper()
	request(t, e, id, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: ref, Input: json.RawMessage(input),
		Stream: &wire.StreamParams{Window: window, WindowBytes: windowBytes}})
}

var streamScenarios = []callScenario{
	{name: "the byte window holds the producer back", host: "1.2.0", run: func(t *testing.T, e hostEnd) {
		// Each chunk's data, {"i":N}, is 7 bytes: two fit in 15, a third
		// would make 21.
		invokeStreamBytes(t, e, 10, "count", `{"n":5}`, 16, 15)
		expectChunk(t, e.next(), "10", 1, `{"i":1}`)
		expectChunk(t, e.next(), "10", 2, `{"i":2}`)
		pingNext(t, e, 11) // blocked at the byte window, far below the window of chunks
		notifyHost(t, e, wire.MethodStreamAck, `{"id":10,"seq":1}`)
		expectChunk(t, e.next(), "10", 3, `{"i":3}`)
		pingNext(t, e, 12)
		notifyHost(t, e, wire.MethodStreamAck, `{"id":10,"seq":3}`)
		expectChunk(t, e.next(), "10", 4, `{"i":4}`)
		expectChunk(t, e.next(), "10", 5, `{"i":5}`)
		expectResult(t, e.next(), 10, `{}`)
	}},
	{name: "a chunk larger than the byte window goes alone", host: "1.2.0", run: func(t *testing.T, e hostEnd) {
		invokeStreamBytes(t, e, 10, "count", `{"n":2}`, 16, 5)
		expectChunk(t, e.next(), "10", 1, `{"i":1}`)
		pingNext(t, e, 11) // chunk 2 waits until chunk 1 is acknowledged
		notifyHost(t, e, wire.MethodStreamAck, `{"id":10,"seq":1}`)
		expectChunk(t, e.next(), "10", 2, `{"i":2}`)
		expectResult(t, e.next(), 10, `{}`)
	}},
	{name: "the window holds the producer back", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		invokeStream(t, e, 10, "count", `{"n":6}`, 2)
		expectChunk(t, e.next(), "10", 1, `{"i":1}`)
		expectChunk(t, e.next(), "10", 2, `{"i":2}`)
		pingNext(t, e, 11) // blocked at the window: nothing more was sent
		notifyHost(t, e, wire.MethodStreamAck, `{"id":10,"seq":1}`)
		expectChunk(t, e.next(), "10", 3, `{"i":3}`)
		pingNext(t, e, 12)
		notifyHost(t, e, wire.MethodStreamAck, `{"id":10,"seq":1}`) // not above the last: no credit
		pingNext(t, e, 13)
		notifyHost(t, e, wire.MethodStreamAck, `{"id":10,"seq":3}`)
		expectChunk(t, e.next(), "10", 4, `{"i":4}`)
		expectChunk(t, e.next(), "10", 5, `{"i":5}`)
		pingNext(t, e, 14)
		notifyHost(t, e, wire.MethodStreamAck, `{"id":10,"seq":99}`) // capped to the chunks sent
		expectChunk(t, e.next(), "10", 6, `{"i":6}`)
		expectResult(t, e.next(), 10, `{}`)
	}},
	{name: "cancelled half way by the host", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		invokeStream(t, e, 10, "count", `{"n":100}`, 2)
		expectChunk(t, e.next(), "10", 1, `{"i":1}`)
		expectChunk(t, e.next(), "10", 2, `{"i":2}`)
		notifyHost(t, e, wire.MethodCancel, `{"id":10}`)
		// The answer and the producer's "closed" race.
		a, b := e.next(), e.next()
		if a.Method == wire.MethodNotify {
			a, b = b, a
		}
		if string(a.ID) != "10" || a.Error == nil || a.Error.Code != protocol.CodeRequestCancelled {
			t.Fatalf("got %s, want request 10 cancelled", frame(a))
		}
		if b.Method != wire.MethodNotify || !strings.Contains(string(b.Params), `"closed"`) {
			t.Fatalf("got %s, want the producer's closed notify", frame(b))
		}
		notifyHost(t, e, wire.MethodStreamAck, `{"id":10,"seq":2}`) // for a stream that ended: ignored
		pingNext(t, e, 11)
	}},
	{name: "cancelled half way by the producer", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		invokeStream(t, e, 10, "count", `{"n":5,"fail_at":2}`, 4)
		expectChunk(t, e.next(), "10", 1, `{"i":1}`)
		m := e.next()
		if string(m.ID) != "10" || m.Error == nil || m.Error.Code != protocol.CodePluginError || m.Error.Message != "failed at chunk 2" {
			t.Fatalf("got %s, want the -32000 of chunk 2", frame(m))
		}
	}},
	{name: "no stream asked for: one output", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		invokeStream(t, e, 10, "count", `{"n":3}`, 0)
		expectResult(t, e.next(), 10, `{"output":[{"i":1},{"i":2},{"i":3}]}`)
	}},
	{name: "a 1.0 host gets one output", host: "1.0.0", run: func(t *testing.T, e hostEnd) {
		invokeStream(t, e, 10, "count", `{"n":2}`, 0)
		expectResult(t, e.next(), 10, `{"output":[{"i":1},{"i":2}]}`)
	}},
	{name: "a window out of range", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		invokeStream(t, e, 10, "count", `{"n":2}`, wire.MaxStreamWindow+1)
		if m := e.next(); string(m.ID) != "10" || m.Error == nil || m.Error.Code != protocol.CodeInvalidParams {
			t.Fatalf("got %s, want -32602", frame(m))
		}
	}},
	{name: "a provider that does not stream answers its output", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		invokeStream(t, e, 10, "plain", `"x"`, 4)
		expectResult(t, e.next(), 10, `{"output":{"plain":"x"}}`)
	}},
	{name: "consuming a stream acknowledges as it takes", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		relay(t, e, 10, "relay", `{"capability":"gen","method":"count","input":1}`)
		c := expectCall(t, e.next(), `{"capability":"gen","method":"count","input":1,"parent":10,"stream":{"window":16}}`)
		var want []string
		for seq := 1; seq <= 16; seq++ {
			notifyHost(t, e, wire.MethodStreamChunk, chunkParams(string(c), seq, strconv.Itoa(seq)))
			want = append(want, strconv.Itoa(seq))
		}
		expectAck(t, e.next(), c, 8)
		expectAck(t, e.next(), c, 16)
		answer(t, e, c, `{"output":"last"}`) // one more chunk
		expectResult(t, e.next(), 10, `{"output":{"chunks":[`+strings.Join(want, ",")+`,"last"]}}`)
	}},
	{name: "breaking out of the range cancels the call", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		relay(t, e, 10, "relay", `{"capability":"gen","method":"count","take":2}`)
		c := expectCall(t, e.next(), `{"capability":"gen","method":"count","parent":10,"stream":{"window":16}}`)
		for seq := 1; seq <= 3; seq++ {
			notifyHost(t, e, wire.MethodStreamChunk, chunkParams(string(c), seq, strconv.Itoa(seq)))
		}
		expectCancel(t, e.next(), c)
		expectResult(t, e.next(), 10, `{"output":{"chunks":[1,2]}}`)
		notifyHost(t, e, wire.MethodStreamChunk, chunkParams(string(c), 4, `4`)) // late: dropped
		answerError(t, e, c, protocol.CodeRequestCancelled, "cancelled")         // late: dropped
		pingNext(t, e, 11)
	}},
	{name: "the producer's error ends the stream", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		relay(t, e, 10, "relay", `{"capability":"gen","method":"count"}`)
		c := expectCall(t, e.next(), `{"capability":"gen","method":"count","parent":10,"stream":{"window":16}}`)
		notifyHost(t, e, wire.MethodStreamChunk, chunkParams(string(c), 1, `"a"`))
		answerError(t, e, c, protocol.CodeNotAvailable, "provider crashed")
		expectResult(t, e.next(), 10, `{"output":{"chunks":["a"],"error":{"code":-32006,"message":"provider crashed"}}}`)
	}},
	{name: "a chunk out of sequence fails the stream", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		relay(t, e, 10, "relay", `{"capability":"gen","method":"count"}`)
		c := expectCall(t, e.next(), `{"capability":"gen","method":"count","parent":10,"stream":{"window":16}}`)
		notifyHost(t, e, wire.MethodStreamChunk, chunkParams(string(c), 1, `1`))
		notifyHost(t, e, wire.MethodStreamChunk, chunkParams(string(c), 3, `3`))
		expectCancel(t, e.next(), c)
		m := e.next()
		var res struct {
			Output struct {
				Chunks []int
				Error  *protocol.Error
			}
		}
		if string(m.ID) != "10" || json.Unmarshal(m.Result, &res) != nil || res.Output.Error == nil ||
			res.Output.Error.Code != wire.CodeInternalError || !strings.Contains(res.Output.Error.Message, "chunk 3 after chunk 1") {
			t.Fatalf("got %s, want a -32603 naming chunk 3 after chunk 1", frame(m))
		}
	}},
	{name: "a chunk past the acks sent fails the stream at once", host: "1.1.0", run: func(t *testing.T, e hostEnd) {
		// The consumer took chunk 1 (no ack yet: that comes after 8), so
		// its queue has room for chunk 17; yet 17 is past the 16 credits
		// of no ack, and is judged so when it arrives (§5.12).
		relay(t, e, 10, "relay", `{"capability":"gen","method":"count","report":true,"delay_ms":300}`)
		c := expectCall(t, e.next(), `{"capability":"gen","method":"count","parent":10,"stream":{"window":16}}`)
		notifyHost(t, e, wire.MethodStreamChunk, chunkParams(string(c), 1, `1`))
		if m := e.next(); m.Method != wire.MethodNotify || !jsonEqual(m.Params, `{"event":"took","data":{"n":1}}`) {
			t.Fatalf("got %s, want the notify took 1", frame(m))
		}
		for seq := 2; seq <= 17; seq++ {
			notifyHost(t, e, wire.MethodStreamChunk, chunkParams(string(c), seq, strconv.Itoa(seq)))
		}
		expectCancel(t, e.next(), c)
		m := e.next()
		var res struct {
			Output struct {
				Chunks []int
				Error  *protocol.Error
			}
		}
		if string(m.ID) != "10" || json.Unmarshal(m.Result, &res) != nil || len(res.Output.Chunks) != 1 || res.Output.Error == nil ||
			res.Output.Error.Code != wire.CodeInternalError || !strings.Contains(res.Output.Error.Message, "chunk 17 is beyond the window: 0 acknowledged, window 16") {
			t.Fatalf("got %s, want chunk 1 then a -32603 naming chunk 17 beyond the window", frame(m))
		}
	}},
	{name: "a 1.0 host refuses a stream call locally", host: "1.0.0", run: func(t *testing.T, e hostEnd) {
		relay(t, e, 10, "relay", `{"capability":"gen","method":"count"}`)
		m := e.next() // nothing was sent before the answer
		if string(m.ID) != "10" || !strings.Contains(string(m.Result), `without the \"calls\" feature`) {
			t.Fatalf("got %s, want a refusal naming the calls feature", frame(m))
		}
	}},
}

// TestStreamScenarios plays every stream scenario against the streamer
// plugin of each SDK, as a real process.
func TestStreamScenarios(t *testing.T) {
	bin := buildStreamer(t)
	sdks := []sdkUnderTest{
		{"go", func(t *testing.T) hostEnd { return startCommand(t, bin, ".", nil) }},
		{"python", func(t *testing.T) hostEnd { return startProcess(t, "python3", "testdata", "streamer.py") }},
		{"node", func(t *testing.T) hostEnd { return startProcess(t, "node", "testdata", "streamer.js") }},
	}
	runScenarios(t, sdks, streamScenarios)
}

// TestStreamExamples plays a host against the Python and Node.js stream
// examples: the countdown streams under the window, and digest consumes a
// stream of its call.
func TestStreamExamples(t *testing.T) {
	for _, ex := range []struct{ name, interpreter, dir, script string }{
		{"python", "python3", "python", "example_stream.py"},
		{"node", "node", "node", "example_stream.js"},
	} {
		t.Run(ex.name, func(t *testing.T) {
			e := startProcess(t, ex.interpreter, ex.dir, ex.script)
			request(t, e, 1, wire.MethodInitialize, initParams("1.1.0"))
			if m := e.next(); string(m.ID) != "1" || m.Error != nil {
				t.Fatalf("initialize: got %s", frame(m))
			}
			invokeStream(t, e, 2, "countdown", `3`, 2)
			expectChunk(t, e.next(), "2", 1, `3`)
			expectChunk(t, e.next(), "2", 2, `2`)
			pingNext(t, e, 3)
			notifyHost(t, e, wire.MethodStreamAck, `{"id":2,"seq":2}`)
			expectChunk(t, e.next(), "2", 3, `1`)
			expectResult(t, e.next(), 2, `{}`)
			invokeStream(t, e, 4, "countdown", `2`, 0)
			expectResult(t, e.next(), 4, `{"output":[2,1]}`)

			relay(t, e, 5, "digest", `{"prompt":"hi"}`)
			c := expectCall(t, e.next(), `{"capability":"text.generate","method":"tokens","input":{"prompt":"hi"},"parent":5,"stream":{"window":16}}`)
			notifyHost(t, e, wire.MethodStreamChunk, chunkParams(string(c), 1, `"Hel"`))
			notifyHost(t, e, wire.MethodStreamChunk, chunkParams(string(c), 2, `"lo"`))
			answer(t, e, c, `{}`)
			expectResult(t, e.next(), 5, `{"output":"Hello"}`)

			request(t, e, 99, wire.MethodShutdown, nil)
			expectResult(t, e.next(), 99, `{}`)
			e.closeInput()
			e.ended()
		})
	}
}
