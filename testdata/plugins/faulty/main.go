// Command faulty is a raw extkernel plugin, written against packages
// protocol and internal/wire without the SDK, that misbehaves in the way its
// first argument names. The sidecar tests start it for real, one manifest
// directory per fault under testdata/plugins.
//
// Modes: exit-early, no-handshake, slow-handshake, banner, invalid-json,
// oversized, crash-in-call, no-answer, ignore-sigterm, grandchild,
// flood-stderr, undeclared, bad-version, init-error, stop-reading,
// request-first, hang, close-stdout, wrong-id (answers initialize with id
// 999), duplicate-id (answers a call with a
// response holding two ids, its own and another), stall-once (stops reading stdin after
// the handshake until it receives SIGUSR1, then serves normally),
// leak-secret (writes the config's "secret" everywhere it can, see leak),
// stream-flood (answers a provider/invoke that asks for a stream with one
// chunk more than its window at once, then the notify "flooded" and the
// result; and one that asks
// for none with a stray chunk before its answer), stream-bad-chunk
// (answers a stream request with a chunk frame in the Go SDK's layout whose
// data is not valid JSON: a raw control character),
// stream-bytes (answers a stream request with two chunks of 600 KiB, within
// the window of chunks but past a byte window of 1 MiB), stream-params
// (answers a stream request with one chunk, the stream params it got;
// with FAULTY_PROTOCOL set it answers initialize with that protocol
// version), slow-reader (serves normally, but reads one message every 20 ms after
// the handshake: a plugin that reads its stdin slowly but steadily),
// call-flood (sends 400 capability/call requests after the handshake,
// then never reads its stdin again), garbage (sends 1000 malformed
// messages of eight kinds after the handshake, then the notify "sent", then
// serves), garbage-mixed (the same, with a well-formed log notification
// after each malformed message), notify-flood (after the handshake, sends
// FLOOD_NOTIFIES notifies "flood" as fast as it can, each with FLOOD_DATA
// bytes of data, then the notify "flood-done" and the stderr line "notify
// flood done"; FLOOD_NOTIFIES 0 floods until it is stopped; it serves
// calls meanwhile), wide-lines (sends, after the handshake, a log
// notification with a message and a field of 1 MiB each, an hclog JSON
// line of 200 KiB on stderr, and a response and a chunk for ids of 1 MiB
// the host never sent; then the notify "sent", then serves), and
// well-behaved (serves normally).
// sleeper is the grandchild's mode. Without an argument, the mode is
// FAULTY_MODE's. Any mode declares the providers FAULTY_PROVIDERS lists
// ("ref,...") and the capabilities FAULTY_PROVIDES lists
// ("key@version,...").
//
// The hostile modes (hostile.go, where their environment is described)
// attack the host for as long as they run, while serving: slow-call-flood
// (sends capability/call to FAULTY_CALL every FAULTY_EVERY and reads its
// stdin only every FAULTY_READ_EVERY, so that the answers it asked for
// pile up toward it), stream-consumer (asks FAULTY_CALL for a stream with
// the window of 1024 chunks and no byte window, reads slowly and
// acknowledges what it read, or stalls; reports each stream's end with
// the notify "stream-ended"), stream-push (answers a stream request with
// all its chunks at once, whatever the windows), stream-windowed (a
// producer of protocol 1.1: honours the window of chunks, ignores
// window_bytes), notify-paced (sends notify events of FAULTY_SIZE bytes
// of data every FAULTY_EVERY) and garbage-flood (malformed messages mixed
// with warn logs and stderr lines, and a burst of 110 malformed ones every
// 3 seconds).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

var (
	floodDone = make(chan struct{})
	in        = wire.NewFrameReader(os.Stdin, 0)
	out       = wire.NewFrameWriter(os.Stdout)
	mode      string
	secret    string // leak-secret: the config's secret
)

func main() {
	mode = os.Getenv("FAULTY_MODE")
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case "sleeper":
		signal.Ignore(syscall.SIGTERM)
		sleepForever()
	case "exit-early":
		fmt.Fprintln(os.Stderr, "fatal: missing configuration file")
		os.Exit(3)
	case "no-handshake":
		_, _ = io.Copy(io.Discard, os.Stdin)
		return
	case "banner":
		fmt.Println("Starting faulty plugin v2...")
	case "grandchild":
		startGrandchild()
	case "flood-stderr":
		go flood()
	case "ignore-sigterm":
		signal.Ignore(syscall.SIGTERM)
	}
	resume := make(chan os.Signal, 1)
	if mode == "stall-once" {
		signal.Notify(resume, syscall.SIGUSR1)
	}
	handshake()
	if run := hostileModes[mode]; run != nil {
		run()
		return
	}
	switch mode {
	case "notify-flood":
		go floodNotifies()
	case "stop-reading":
		sleepForever()
	case "stall-once":
		<-resume
	case "call-flood":
		for i := range 400 {
			p, _ := json.Marshal(wire.CapabilityCallParams{Capability: "test.big", Method: "get"})
			send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: json.RawMessage(strconv.Itoa(1000 + i)),
				Method: wire.MethodCapabilityCall, Params: p})
		}
		sleepForever()
	case "garbage", "garbage-mixed":
		for i := range 1000 {
			send(garbage(i))
			if mode == "garbage-mixed" {
				notify(wire.MethodLog, wire.LogParams{Level: "debug", Message: "between the garbage"})
			}
		}
		notify(wire.MethodNotify, wire.NotifyParams{Event: "sent"})
	case "wide-lines":
		sendWideLines()
	}
	serve()
}

// garbage returns the i-th malformed message: well-framed JSON-RPC whose
// params do not decode, or whose id the host never sent.
func garbage(i int) *wire.Message {
	m := &wire.Message{JSONRPC: wire.JSONRPCVersion}
	switch i % 8 {
	case 0:
		m.Method, m.Params = wire.MethodLog, json.RawMessage(`["not","an","object"]`)
	case 1:
		m.Method, m.Params = wire.MethodNotify, json.RawMessage(`{"event":42}`)
	case 2:
		m.Method, m.Params = wire.MethodCancel, json.RawMessage(`["everything"]`)
	case 3:
		m.ID, m.Result = json.RawMessage(strconv.Itoa(1_000_000+i)), json.RawMessage(`null`)
	case 4:
		m.Method, m.Params = wire.MethodStreamChunk, json.RawMessage(`{"id":"x","seq":1,"data":1}`)
	case 5:
		m.Method, m.Params = wire.MethodStreamAck, json.RawMessage(`{"id":[],"seq":"one"}`)
	case 6:
		m.Method, m.Params = wire.MethodProgress, json.RawMessage(`{"id":7,"fraction":"half"}`)
	case 7:
		m.Method, m.Params = wire.MethodProgress, json.RawMessage(`{"id":`+strconv.Itoa(1_000_000+i)+`}`)
	}
	return m
}

// sendWideLines sends the wide-lines mode's messages: each would make
// the host log a line of hundreds of KiB or more, were a line not bounded.
func sendWideLines() {
	wide := strings.Repeat("w", 1<<20)
	notify(wire.MethodLog, wire.LogParams{Level: "warn", Message: "wide " + wide, Fields: map[string]any{"wide": wide}})
	fmt.Fprintf(os.Stderr, `{"@level":"warn","@message":"wide json","wide":%q}`+"\n", wide[:200<<10])
	id, _ := json.Marshal("id-" + wide)
	send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: id, Result: json.RawMessage(`null`)})
	chunk, _ := json.Marshal(map[string]any{"id": json.RawMessage(id), "seq": 1, "data": 1})
	send(&wire.Message{JSONRPC: wire.JSONRPCVersion, Method: wire.MethodStreamChunk, Params: chunk})
	notify(wire.MethodNotify, wire.NotifyParams{Event: "sent"})
}

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func read() *wire.Message {
	m, err := in.ReadMessage()
	if err != nil {
		if err != io.EOF {
			fmt.Fprintln(os.Stderr, "read:", err)
		}
		return nil
	}
	return m
}

func send(m *wire.Message) {
	if err := out.WriteMessage(m); err != nil {
		fmt.Fprintln(os.Stderr, "write:", err)
		os.Exit(1)
	}
}

func respond(id json.RawMessage, result any) {
	raw, _ := json.Marshal(result)
	send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: id, Result: raw})
}

func notify(method string, params any) {
	raw, _ := json.Marshal(params)
	send(&wire.Message{JSONRPC: wire.JSONRPCVersion, Method: method, Params: raw})
}

// handshake reads initialize and answers it as the mode dictates.
func handshake() {
	m := read()
	if m == nil {
		os.Exit(1)
	}
	var p protocol.InitializeParams
	_ = json.Unmarshal(m.Params, &p)
	// It uses every feature the host serves (protocol 1.4), or those
	// FAULTY_FEATURES lists ("none" for none).
	res := protocol.InitializeResult{ProtocolVersion: protocol.Version, Name: p.Plugin.Name, Version: p.Plugin.Version,
		Features: features(p.Features, os.Getenv("FAULTY_FEATURES"))}
	if v := os.Getenv("FAULTY_PROTOCOL"); v != "" {
		res.ProtocolVersion = v
	}
	declare(&res)
	switch mode {
	case "slow-handshake":
		time.Sleep(3 * time.Second)
	case "request-first":
		send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: json.RawMessage(`"p1"`), Method: "host/info"})
	case "bad-version":
		res.ProtocolVersion = "2.0.0"
	case "init-error":
		send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: m.ID,
			Error: &protocol.Error{Code: protocol.CodePluginError, Message: "bad config: missing key"}})
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "leak-secret":
		var cfg struct{ Secret, Fail, Handshake string }
		_ = json.Unmarshal(p.Config, &cfg)
		secret = cfg.Secret
		if v := os.Getenv("LEAK_SECRET"); v != "" {
			secret = v
		}
		if v := os.Getenv("LEAK_HANDSHAKE"); v != "" {
			cfg.Handshake = v
		}
		leakHandshake(&res, cfg.Handshake)
		if cfg.Fail == "initialize" {
			fmt.Fprintln(os.Stderr, "fatal: token", secret, "was refused")
			send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: m.ID,
				Error: &protocol.Error{Code: protocol.CodePluginError, Message: "bad token " + secret}})
			_, _ = io.Copy(io.Discard, os.Stdin)
			os.Exit(0)
		}
	case "wrong-id":
		respond(json.RawMessage(`999`), res)
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "undeclared":
		res.Interceptors = []protocol.InterceptorDecl{{Point: "tool.before"}, {Point: "secret.point"}}
		res.Strategies = []protocol.StrategyDecl{{Slot: "other.slot"}}
		res.Provides = []protocol.CapabilityDecl{{Capability: "test.faulty", Version: "9.9.9"}, {Capability: "not.mine", Version: "1.0.0"}}
	}
	respond(m.ID, res)
}

// declare adds the providers FAULTY_PROVIDERS lists ("ref,...") and the
// capabilities FAULTY_PROVIDES lists ("key@version,...") to res.
func declare(res *protocol.InitializeResult) {
	for _, ref := range strings.Split(os.Getenv("FAULTY_PROVIDERS"), ",") {
		if ref != "" {
			res.Providers = append(res.Providers, protocol.ProviderDecl{Ref: ref})
		}
	}
	for _, kv := range strings.Split(os.Getenv("FAULTY_PROVIDES"), ",") {
		if k, v, ok := strings.Cut(kv, "@"); ok {
			res.Provides = append(res.Provides, protocol.CapabilityDecl{Capability: k, Version: v})
		}
	}
}

// serve answers requests until stdin ends, misbehaving on calls as the mode
// dictates.
func serve() {
	for {
		if mode == "slow-reader" {
			time.Sleep(20 * time.Millisecond)
		}
		m := read()
		if m == nil {
			break
		}
		switch m.Method {
		case wire.MethodPing:
			if mode != "hang" {
				respond(m.ID, struct{}{})
			}
		case wire.MethodShutdown:
			if mode != "hang" {
				respond(m.ID, struct{}{})
			}
		case wire.MethodCancel:
			var p wire.CancelParams
			_ = json.Unmarshal(m.Params, &p)
			notify(wire.MethodNotify, wire.NotifyParams{Event: "cancelled", Data: p.ID})
		default:
			if m.IsRequest() {
				call(m)
			}
		}
	}
	if mode == "ignore-sigterm" {
		sleepForever()
	}
}

// call answers one ordinary request.
func call(m *wire.Message) {
	switch mode {
	case "hang", "no-answer":
		return
	case "close-stdout":
		os.Stdout.Close()
	case "invalid-json":
		_, _ = os.Stdout.WriteString(`{"jsonrpc": "2.0", "id": ` + string(m.ID) + `, "result": oops}` + "\n")
	case "duplicate-id":
		_, _ = os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"id":` + string(m.ID) + `0,"result":{"output":"dup"}}` + "\n")
	case "oversized":
		_, _ = os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"output":"` + strings.Repeat("x", 2<<20) + `"}}` + "\n")
	case "flood-stderr":
		<-floodDone
		respond(m.ID, wire.OutputResult{Output: json.RawMessage(`"flooded"`)})
	case "crash-in-call":
		fmt.Fprintln(os.Stderr, "panic: boom in", m.Method)
		os.Exit(2)
	case "leak-secret":
		leak(m)
	case "stream-flood":
		floodStream(m)
	case "stream-bytes":
		// Two chunks of 600 KiB within the window of chunks: the second
		// takes the unacknowledged data past a byte window of 1 MiB.
		data := json.RawMessage(strconv.Quote(strings.Repeat("z", 600<<10)))
		for seq := 1; seq <= 2; seq++ {
			notify(wire.MethodStreamChunk, wire.StreamChunkParams{ID: m.ID, Seq: int64(seq), Data: data})
		}
		respond(m.ID, struct{}{})
	case "stream-params":
		// One chunk: the stream params the host asked with.
		var p wire.ProviderInvokeParams
		_ = json.Unmarshal(m.Params, &p)
		b, _ := json.Marshal(p.Stream)
		notify(wire.MethodStreamChunk, wire.StreamChunkParams{ID: m.ID, Seq: 1, Data: b})
		respond(m.ID, struct{}{})
	case "stream-bad-chunk":
		_, _ = os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":` + string(m.ID) +
			`,"seq":1,"data":"a` + "\x01" + `b"}}` + "\n")
	default:
		switch m.Method {
		case wire.MethodIntercept, wire.MethodStrategyInvoke, wire.MethodProviderInvoke, wire.MethodActionRun:
		default: // as wire.md §2 says; the faults above answer anything
			send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: m.ID,
				Error: &protocol.Error{Code: protocol.CodeMethodNotFound, Message: "unknown method " + m.Method}})
			return
		}
		var p struct {
			Ref   string          `json:"ref"`
			Input json.RawMessage `json:"input"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Ref == "log" {
			notify(wire.MethodLog, wire.LogParams{Level: "warn", Message: "from plugin", Fields: map[string]any{"k": "v"}})
		}
		respond(m.ID, wire.OutputResult{Output: p.Input})
	}
}

// startGrandchild starts a process that ignores SIGTERM and outlives this
// one, and records its pid in the data directory.
func startGrandchild() {
	cmd := exec.Command(os.Args[0], "sleeper")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "start grandchild:", err)
		os.Exit(1)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	if err := os.WriteFile(filepath.Join(os.Getenv("EXTKERNEL_DATA_DIR"), "grandchild.pid"), []byte(pid), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "write pid:", err)
		os.Exit(1)
	}
}

// flood writes 20000 stderr lines, half of them hclog JSON, then "flood
// done"; calls are answered once it is done.
func flood() {
	for i := range 20000 {
		if i%2 == 0 {
			fmt.Fprintf(os.Stderr, "plain line %d %s\n", i, strings.Repeat("-", 80))
		} else {
			fmt.Fprintf(os.Stderr, `{"@level":"debug","@message":"json line","n":%d}`+"\n", i)
		}
	}
	fmt.Fprintln(os.Stderr, "flood done")
	close(floodDone)
}

// floodNotifies sends the notifies of mode notify-flood.
func floodNotifies() {
	n, _ := strconv.Atoi(os.Getenv("FLOOD_NOTIFIES"))
	size, _ := strconv.Atoi(os.Getenv("FLOOD_DATA"))
	data := json.RawMessage(strconv.Quote(strings.Repeat("x", max(0, size-2))))
	for i := 0; n == 0 || i < n; i++ {
		notify(wire.MethodNotify, wire.NotifyParams{Event: "flood", Data: data})
	}
	notify(wire.MethodNotify, wire.NotifyParams{Event: "flood-done"})
	fmt.Fprintln(os.Stderr, "notify flood done")
}

// leakHandshake puts the secret in the answer to initialize, as how says:
// "text" in the free text of declarations the manifest authorizes
// (descriptions, titles, placements, schemas), "version" in the plugin's
// version, "name" in its name, "protocol" in its protocol version, "ids"
// in a provider ref and an action ID, "early" in the method of a
// notification sent before the answer.
func leakHandshake(res *protocol.InitializeResult, how string) {
	switch how {
	case "text":
		res.Interceptors = []protocol.InterceptorDecl{{Point: "tool.before"}}
		schema, _ := json.Marshal(map[string]any{"description": "token " + secret, secret: map[string]any{"type": "string"}})
		res.Providers = []protocol.ProviderDecl{{Ref: "leak", Description: "uses " + secret, Schema: schema},
			{Ref: "error"}, {Ref: "quiet"}}
		res.Actions = []protocol.ActionDecl{{ID: "leak.act", Title: "Title " + secret, Placement: "place " + secret}}
	case "version":
		res.Version = "1.0.0+" + secret
	case "name":
		res.Name = "name-" + secret
	case "protocol":
		res.ProtocolVersion = "1.0.0-" + secret
	case "ids":
		res.Providers = []protocol.ProviderDecl{{Ref: "ref-" + secret}}
		res.Actions = []protocol.ActionDecl{{ID: "act-" + secret, Title: "t"}}
	case "early":
		notify("x/"+secret, nil)
	}
}

// leak writes the secret into every channel the host logs or quotes: a log
// notification (message, nested fields and a field key), a notify
// notification, a plain stderr line, a stderr line over 16 KiB with the
// secret across the 16 KiB mark, an hclog JSON stderr line (with the
// secret also JSON-escaped), then, as the call says: an invalid decision
// (intercept), an error answer with the secret in its message and data
// ("error"), a plain answer ("quiet"), a line on stdout that is not a
// frame with the secret across the 120 bytes a quote shows ("stdout"), or
// a crash (anything else).
func leak(m *wire.Message) {
	var p struct {
		Ref string `json:"ref"`
	}
	_ = json.Unmarshal(m.Params, &p)
	notify(wire.MethodLog, wire.LogParams{Level: "warn", Message: "using " + secret,
		Fields: map[string]any{"token": secret, "nested": map[string]any{"list": []any{secret, 1}, secret: "as a key"}}})
	notify(wire.MethodNotify, wire.NotifyParams{Event: "leak " + secret, Data: json.RawMessage(strconv.Quote(secret))})
	fmt.Fprintln(os.Stderr, "token="+secret)
	half := len(secret) / 2
	fmt.Fprintln(os.Stderr, strings.Repeat("x", 16<<10-half)+secret+strings.Repeat("y", 4<<10))
	escaped := strings.ReplaceAll(secret, "-", `\u002d`)
	fmt.Fprintf(os.Stderr, `{"@level":"error","@message":"auth failed for %s","token":"%s","n":1}`+"\n", secret, escaped)
	switch {
	case m.Method == wire.MethodIntercept:
		respond(m.ID, protocol.InterceptResult{Decision: "allow " + secret})
	case p.Ref == "error":
		send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: m.ID,
			Error: &protocol.Error{Code: protocol.CodePluginError, Message: "rejected " + secret,
				Data: json.RawMessage(`{"token":` + strconv.Quote(secret) + `,` + strconv.Quote(secret) + `:[1]}`)}})
	case p.Ref == "quiet":
		respond(m.ID, wire.OutputResult{Output: json.RawMessage(`"ok"`)})
	case p.Ref == "stdout":
		fmt.Println("debug: token " + secret + strings.Repeat(" ", 120-len("debug: token ")-half) + secret)
	default:
		fmt.Fprintln(os.Stderr, "panic: bad token", secret)
		os.Exit(2)
	}
}

// floodStream breaks a stream's flow control: to a provider/invoke asking for a
// stream of window w it sends chunks 1..w+1 at once, then notifies
// "flooded" and answers {}; to
// one asking for none, a chunk for its id, then the input as output.
func floodStream(m *wire.Message) {
	var p wire.ProviderInvokeParams
	_ = json.Unmarshal(m.Params, &p)
	n := 1
	if p.Stream != nil {
		n = p.Stream.Window + 1
	}
	for seq := 1; seq <= n; seq++ {
		notify(wire.MethodStreamChunk, wire.StreamChunkParams{ID: m.ID, Seq: int64(seq), Data: json.RawMessage(strconv.Itoa(seq))})
	}
	if p.Stream != nil {
		notify(wire.MethodNotify, wire.NotifyParams{Event: "flooded"})
		respond(m.ID, struct{}{})
		return
	}
	respond(m.ID, wire.OutputResult{Output: p.Input})
}

// features returns what a test plugin announces in initialize: the
// host's features, or those list names (comma-separated; "none" for
// none).
func features(host []string, list string) []string {
	switch list {
	case "":
		return host
	case "none":
		return []string{}
	}
	return strings.Split(list, ",")
}
