package sdktest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

// helperEnv names the plugin the test binary plays when it is set: the
// helper-process pattern (os/exec's TestHelperProcess), so that each
// broken plugin is built with the test.
const helperEnv = "SDKTEST_HELPER_PLUGIN"

// helperPlugins are the plugins the test binary plays, by helperEnv.
var helperPlugins = map[string]func(){
	"tool":          func() { toolPlugin(nil) },
	"tool-example":  func() { toolPlugin(map[string]any{"examples": []any{map[string]string{"q": "from the example"}}}) },
	"stream-good":   streamGood,
	"stream-ignore": streamIgnoringCredits,
	"consumer":      consumer,
	"consumer-deaf": consumerNeverAcking,
}

// runHelper plays the plugin helperEnv names, if any, and exits.
func runHelper() {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	play, ok := helperPlugins[mode]
	if !ok {
		fmt.Fprintf(os.Stderr, "no helper plugin %q\n", mode)
		os.Exit(2)
	}
	play()
	os.Exit(0)
}

// toolPlugin contributes tool search.web, whose handler kills its own
// process when its input is null (and echoes it otherwise), and provider
// echo.
func toolPlugin(data any) {
	p := sdk.New("", "")
	p.Provider("echo", "returns its input", func(_ context.Context, in json.RawMessage) (any, error) { return in, nil })
	p.Contribute("tool", "search.web", sdk.Contribution{Title: "Web search", Data: data}, func(_ context.Context, in json.RawMessage) (any, error) {
		if string(in) == "" || string(in) == "null" {
			fmt.Fprintln(os.Stderr, "search.web: no query, exiting")
			os.Exit(3)
		}
		return in, nil
	})
	p.Serve()
}

// streamGood streams five chunks from provider count with the Go SDK,
// which honours the consumer's credits.
func streamGood() {
	p := sdk.New("", "")
	p.StreamProvider("count", "counts to 5", func(ctx context.Context, _ json.RawMessage, send func(any) error) error {
		for i := 1; i <= 5; i++ {
			if err := send(map[string]int{"i": i}); err != nil {
				return err
			}
		}
		return nil
	})
	p.Serve()
}

// streamIgnoringCredits is a raw plugin whose provider count answers a
// stream request with its window plus two chunks at once, whatever it was
// acknowledged: a producer that ignores its credits.
func streamIgnoringCredits() {
	out := wire.NewFrameWriter(os.Stdout)
	reply := func(id json.RawMessage, result any) {
		raw, _ := json.Marshal(result)
		_ = out.WriteMessage(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: id, Result: raw})
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var m wire.Message
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		switch m.Method {
		case wire.MethodInitialize:
			reply(m.ID, protocol.InitializeResult{ProtocolVersion: protocol.Version, Name: os.Getenv(wire.EnvPluginName),
				Version: os.Getenv(wire.EnvPluginVersion), Providers: []protocol.ProviderDecl{{Ref: "count"}}})
		case wire.MethodProviderInvoke:
			var p wire.ProviderInvokeParams
			_ = json.Unmarshal(m.Params, &p)
			if p.Stream == nil {
				reply(m.ID, map[string]any{"output": []int{1}})
				continue
			}
			for seq := int64(1); seq <= int64(p.Stream.Window)+2; seq++ {
				raw, _ := json.Marshal(wire.StreamChunkParams{ID: m.ID, Seq: seq, Data: json.RawMessage(fmt.Sprint(seq))})
				_ = out.WriteMessage(&wire.Message{JSONRPC: wire.JSONRPCVersion, Method: wire.MethodStreamChunk, Params: raw})
			}
			reply(m.ID, struct{}{})
		case wire.MethodPing, wire.MethodShutdown:
			reply(m.ID, struct{}{})
		default:
			raw, _ := json.Marshal(&protocol.Error{Code: protocol.CodeMethodNotFound, Message: "unknown method " + m.Method})
			_ = out.WriteMessage(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: m.ID, Error: &protocol.Error{Code: protocol.CodeMethodNotFound, Message: string(raw)}})
		}
	}
}

// consumer's provider tail consumes the stream of storage.kv's method
// tail with the Go SDK, which acknowledges as it takes.
func consumer() {
	p := sdk.New("", "")
	p.Provider("tail", "counts the chunks of storage.kv tail", func(ctx context.Context, _ json.RawMessage) (any, error) {
		n := 0
		for _, err := range p.CallStream(ctx, "storage.kv", "tail", nil) {
			if err != nil {
				return nil, err
			}
			n++
		}
		return n, nil
	})
	p.Serve()
}

// consumerNeverAcking is a raw plugin that, once initialized, asks the
// host for a stream with a window of 2 and never acknowledges a chunk;
// its provider slow answers after 1.5 s, so that the run lasts past the
// stub host's wait for an ack.
func consumerNeverAcking() {
	var mu sync.Mutex
	out := wire.NewFrameWriter(os.Stdout)
	write := func(m *wire.Message) {
		mu.Lock()
		defer mu.Unlock()
		_ = out.WriteMessage(m)
	}
	reply := func(id json.RawMessage, result any) {
		raw, _ := json.Marshal(result)
		write(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: id, Result: raw})
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var m wire.Message
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil || m.Method == "" {
			continue
		}
		switch m.Method {
		case wire.MethodInitialize:
			reply(m.ID, protocol.InitializeResult{ProtocolVersion: protocol.Version, Name: os.Getenv(wire.EnvPluginName),
				Version: os.Getenv(wire.EnvPluginVersion), Providers: []protocol.ProviderDecl{{Ref: "slow"}},
				Features: []string{wire.FeatureCalls, wire.FeatureStreams}})
			raw, _ := json.Marshal(wire.CapabilityCallParams{Capability: "storage.kv", Method: "tail", Stream: &wire.StreamParams{Window: 2}})
			write(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: json.RawMessage(`"c1"`), Method: wire.MethodCapabilityCall, Params: raw})
		case wire.MethodProviderInvoke:
			go func(id json.RawMessage) {
				time.Sleep(1500 * time.Millisecond)
				reply(id, struct{}{})
			}(m.ID)
		case wire.MethodPing, wire.MethodShutdown:
			reply(m.ID, struct{}{})
		default:
			write(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: m.ID, Error: &protocol.Error{Code: protocol.CodeMethodNotFound, Message: "unknown method " + m.Method}})
		}
	}
}

// helperPackage writes a package directory whose runtime runs this test
// binary as the helper plugin mode, with contributes as its manifest's
// runtime.contributes.
func helperPackage(t *testing.T, mode, contributes string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "helper")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf(`{"format": 1, "name": "helper", "version": "1.0.0",
  "requires": [{"capability": "storage.kv", "version": "^1.0"}],
  "runtime": {"command": "./plugin.sh", "env": {%q: %q}%s}}`, helperEnv, mode, contributes)
	script := "#!/bin/sh\nexec '" + exe + "' \"$@\"\n"
	for name, data := range map[string]string{"plugin.json": manifest, "plugin.sh": script} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBrokenContributions runs the suite on plugins built in the test that
// break in what they contribute: each case named is judged as want says,
// its reason containing the text given.
func TestBrokenContributions(t *testing.T) {
	tool := `, "contributes": {"tool": ["search.web"]}`
	tests := []struct {
		name, mode, contributes string
		inputs                  map[string]json.RawMessage
		want                    map[string]Status
		reason                  map[string]string
	}{
		{name: "a tool handler that exits", mode: "tool", contributes: tool,
			want:   map[string]Status{"call/tool/search.web": Fail, "call/provider/echo": Pass},
			reason: map[string]string{"call/tool/search.web": "exited"}},
		{name: "the tool given an input", mode: "tool", contributes: tool,
			inputs: map[string]json.RawMessage{"tool/search.web": json.RawMessage(`{"q": "extkernel"}`)},
			want:   map[string]Status{"call/tool/search.web": Pass, "declarations": Pass}},
		{name: "the tool's declared example", mode: "tool-example", contributes: tool,
			want: map[string]Status{"call/tool/search.web": Pass}},
		{name: "an input for no declaration", mode: "tool-example", contributes: tool,
			inputs: map[string]json.RawMessage{"tool/search.wbe": json.RawMessage(`1`)},
			want:   map[string]Status{"declarations": Warn},
			reason: map[string]string{"declarations": `inputs: "tool/search.wbe" names no declaration`}},
		{name: "a producer honouring its credits", mode: "stream-good",
			want:   map[string]Status{"stream/provider/count": Pass, "call/provider/count": Pass},
			reason: map[string]string{"stream/provider/count": "streamed 5 chunks within the window of 2"}},
		{name: "a producer ignoring its credits", mode: "stream-ignore",
			want: map[string]Status{"stream/provider/count": Fail, "call/provider/count": Pass},
			reason: map[string]string{"stream/provider/count": `chunk seq 3 is beyond the window: 0 acknowledged, window 2, so at most seq 2` +
				` until the next ack; a producer MUST NOT send a chunk beyond its credits or out of sequence, the host fails the stream (§5.12); the frame: "{\"jsonrpc\":\"2.0\",\"method\":\"$/stream/chunk\",\"params\":{\"id\":`}},
		{name: "a consumer acknowledging as it takes", mode: "consumer",
			want:   map[string]Status{"callbacks": Pass, "call/provider/tail": Pass, "stream/provider/tail": Pass},
			reason: map[string]string{"callbacks": `"storage.kv.tail"`}},
		{name: "a consumer that never acknowledges", mode: "consumer-deaf",
			want:   map[string]Status{"callbacks": Warn},
			reason: map[string]string{"callbacks": `a stream of the host's was not acknowledged: "storage.kv.tail" (a stream): its window of 2 chunks was full and no ack came within 1s`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := helperPackage(t, tt.mode, tt.contributes)
			rep, err := Run(context.Background(), dir, Options{Inputs: tt.inputs, CallTimeout: 5 * time.Second}) // room for a loaded CI machine
			if err != nil {
				t.Fatal(err)
			}
			st := statuses(rep)
			for name, want := range tt.want {
				if st[name] != want {
					t.Errorf("case %s = %q, want %q; report:\n%s", name, st[name], want, dump(rep))
				}
			}
			for _, c := range rep.Cases {
				if sub, ok := tt.reason[c.Name]; ok && !strings.Contains(c.Reason, sub) {
					t.Errorf("case %s: reason %q does not contain %q", c.Name, c.Reason, sub)
				}
			}
			noChildren(t)
		})
	}
}
