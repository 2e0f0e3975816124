// Command faulty is a raw extkernel plugin, written against package protocol
// without the SDK, that misbehaves in the way its first argument names. The
// sidecar tests start it for real, one manifest directory per fault under
// testdata/plugins.
//
// Modes: exit-early, no-handshake, slow-handshake, banner, invalid-json,
// oversized, crash-in-call, no-answer, ignore-sigterm, grandchild,
// flood-stderr, undeclared, bad-version, init-error, stop-reading,
// request-first, hang, close-stdout, duplicate-id (answers a call with a
// response holding two ids, its own and another), stall-once (stops reading stdin after
// the handshake until it receives SIGUSR1, then serves normally),
// leak-secret (writes the config's "secret" everywhere it can, see leak),
// and well-behaved (serves normally). sleeper is the grandchild's mode.
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

	"github.com/extkernel/extkernel/protocol"
)

var (
	floodDone = make(chan struct{})
	in        = protocol.NewFrameReader(os.Stdin, 0)
	out       = protocol.NewFrameWriter(os.Stdout)
	mode      string
	secret    string // leak-secret: the config's secret
)

func main() {
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
	switch mode {
	case "stop-reading":
		sleepForever()
	case "stall-once":
		<-resume
	}
	serve()
}

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func read() *protocol.Message {
	m, err := in.ReadMessage()
	if err != nil {
		if err != io.EOF {
			fmt.Fprintln(os.Stderr, "read:", err)
		}
		return nil
	}
	return m
}

func send(m *protocol.Message) {
	if err := out.WriteMessage(m); err != nil {
		fmt.Fprintln(os.Stderr, "write:", err)
		os.Exit(1)
	}
}

func respond(id json.RawMessage, result any) {
	raw, _ := json.Marshal(result)
	send(&protocol.Message{JSONRPC: protocol.JSONRPCVersion, ID: id, Result: raw})
}

func notify(method string, params any) {
	raw, _ := json.Marshal(params)
	send(&protocol.Message{JSONRPC: protocol.JSONRPCVersion, Method: method, Params: raw})
}

// handshake reads initialize and answers it as the mode dictates.
func handshake() {
	m := read()
	if m == nil {
		os.Exit(1)
	}
	var p protocol.InitializeParams
	_ = json.Unmarshal(m.Params, &p)
	res := protocol.InitializeResult{ProtocolVersion: protocol.Version, Name: p.Plugin.Name, Version: p.Plugin.Version}
	switch mode {
	case "slow-handshake":
		time.Sleep(3 * time.Second)
	case "request-first":
		send(&protocol.Message{JSONRPC: protocol.JSONRPCVersion, ID: json.RawMessage(`"p1"`), Method: "host/info"})
	case "bad-version":
		res.ProtocolVersion = "2.0.0"
	case "init-error":
		send(&protocol.Message{JSONRPC: protocol.JSONRPCVersion, ID: m.ID,
			Error: &protocol.Error{Code: protocol.CodePluginError, Message: "bad config: missing key"}})
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "leak-secret":
		var cfg struct{ Secret, Fail string }
		_ = json.Unmarshal(p.Config, &cfg)
		secret = cfg.Secret
		if cfg.Fail == "initialize" {
			fmt.Fprintln(os.Stderr, "fatal: token", secret, "was refused")
			send(&protocol.Message{JSONRPC: protocol.JSONRPCVersion, ID: m.ID,
				Error: &protocol.Error{Code: protocol.CodePluginError, Message: "bad token " + secret}})
			_, _ = io.Copy(io.Discard, os.Stdin)
			os.Exit(0)
		}
	case "undeclared":
		res.Interceptors = []protocol.InterceptorDecl{{Point: "tool.before"}, {Point: "secret.point"}}
		res.Strategies = []protocol.StrategyDecl{{Slot: "other.slot"}}
		res.Provides = []protocol.CapabilityDecl{{Capability: "test.faulty", Version: "9.9.9"}, {Capability: "not.mine", Version: "1.0.0"}}
	}
	respond(m.ID, res)
}

// serve answers requests until stdin ends, misbehaving on calls as the mode
// dictates.
func serve() {
	for {
		m := read()
		if m == nil {
			break
		}
		switch m.Method {
		case protocol.MethodPing:
			if mode != "hang" {
				respond(m.ID, struct{}{})
			}
		case protocol.MethodShutdown:
			if mode != "hang" {
				respond(m.ID, struct{}{})
			}
		case protocol.MethodCancel:
			var p protocol.CancelParams
			_ = json.Unmarshal(m.Params, &p)
			notify(protocol.MethodNotify, protocol.NotifyParams{Event: "cancelled", Data: p.ID})
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
func call(m *protocol.Message) {
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
		respond(m.ID, protocol.OutputResult{Output: json.RawMessage(`"flooded"`)})
	case "crash-in-call":
		fmt.Fprintln(os.Stderr, "panic: boom in", m.Method)
		os.Exit(2)
	case "leak-secret":
		leak(m)
	default:
		var p struct {
			Ref   string          `json:"ref"`
			Input json.RawMessage `json:"input"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Ref == "log" {
			notify(protocol.MethodLog, protocol.LogParams{Level: "warn", Message: "from plugin", Fields: map[string]any{"k": "v"}})
		}
		respond(m.ID, protocol.OutputResult{Output: p.Input})
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

// leak writes the secret into every channel the host logs or quotes: a log
// notification (message and nested fields), a plain stderr line, an hclog
// JSON stderr line (with the secret also JSON-escaped), then, as the call's
// ref says, an error answer ("error"), a line on stdout that is not a frame
// ("stdout"), or a crash (anything else).
func leak(m *protocol.Message) {
	var p struct {
		Ref string `json:"ref"`
	}
	_ = json.Unmarshal(m.Params, &p)
	notify(protocol.MethodLog, protocol.LogParams{Level: "warn", Message: "using " + secret,
		Fields: map[string]any{"token": secret, "nested": map[string]any{"list": []any{secret, 1}}}})
	fmt.Fprintln(os.Stderr, "token="+secret)
	escaped := strings.ReplaceAll(secret, "-", `\u002d`)
	fmt.Fprintf(os.Stderr, `{"@level":"error","@message":"auth failed for %s","token":"%s","n":1}`+"\n", secret, escaped)
	switch p.Ref {
	case "error":
		send(&protocol.Message{JSONRPC: protocol.JSONRPCVersion, ID: m.ID,
			Error: &protocol.Error{Code: protocol.CodePluginError, Message: "rejected " + secret}})
	case "stdout":
		fmt.Println("debug: token " + secret)
	default:
		fmt.Fprintln(os.Stderr, "panic: bad token", secret)
		os.Exit(2)
	}
}
