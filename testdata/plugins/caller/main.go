// Command caller is a raw protocol 1.1 test plugin, written against
// packages protocol and internal/wire without the SDK, that calls the host
// (capability/call) while it serves host requests, each on a goroutine of
// its own: it keeps reading while its handlers wait, so a callee may call
// back into it (A → B → A).
//
// It declares the providers "run" and those CALLER_PROVIDERS lists
// ("ref,..."), which all behave alike, and provides the capabilities
// CALLER_PROVIDES lists ("key@version,..."). It answers initialize with
// protocol version CALLER_PROTOCOL (default protocol.Version): "1.0.0"
// plays a plugin that predates calls. It announces the features
// (protocol 1.4) CALLER_FEATURES lists ("calls,progress", "none" for
// none), by default every one the host announced.
//
// A provider's input is a script, an object whose members it acts on in
// this order (all optional):
//
//	"notify": "event"  send the notify event with data {"plugin": name}
//	"crash": true      exit with status 3 at once
//	"init": true       answer the protocol_version of initialize
//	"block": true      wait until the request is cancelled ($/cancel or
//	                   stdin closing), send the notify "cancelled" with
//	                   data {"plugin": name}, and answer -32800
//	"fail": "message"  answer -32000 with the message
//	"request": "m"     send a request with method m (params {}) and answer
//	                   its outcome, as for call
//	"call": {"capability": k, "method": m, "input": any, "parent": p}
//	                   send capability/call; parent true names the request
//	                   being served, any other value is sent as it is,
//	                   absent sends none. The answer is {"output": out}
//	                   or {"error": {"code": c, "message": s}}
//	"fanout": n        with call: send it n times at once, send the notify
//	                   "fanned-out" once all n are written, and answer
//	                   the list of outcomes
//	"cancel": true     with call: send $/cancel for it right after it
//	"progress": n      send n $/progress for the request, then answer
//	                   {"progressed": n}
//	"chunks": n        answer a request that asked for a stream with n
//	                   chunks (at most its window) and {}, one that did
//	                   not with {"output": {"streamed": false}}
//	"echo": any        otherwise: answer {"echo": any}, with
//	                   "traceparent" too when the request carried one
//
// Its calls carry the traceparent of the request they serve.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

var (
	name = os.Getenv("EXTKERNEL_PLUGIN_NAME")
	out  = wire.NewFrameWriter(os.Stdout)

	initMu     sync.Mutex
	initParams protocol.InitializeParams

	// calls waits for the answers to this plugin's own requests, by id.
	calls   sync.Map // string id -> chan *wire.Message
	nextID  atomic.Int64
	serving sync.Map // host request id (JSON text) -> context.CancelFunc
	workers sync.WaitGroup
)

type script struct {
	Notify   string          `json:"notify"`
	Crash    bool            `json:"crash"`
	Init     bool            `json:"init"`
	Block    bool            `json:"block"`
	Fail     string          `json:"fail"`
	Request  string          `json:"request"`
	Call     *callSpec       `json:"call"`
	Fanout   int             `json:"fanout"`
	Cancel   bool            `json:"cancel"`
	Progress int             `json:"progress"`
	Chunks   int             `json:"chunks"`
	Echo     json.RawMessage `json:"echo"`
}

type callSpec struct {
	Capability string          `json:"capability"`
	Method     string          `json:"method"`
	Input      json.RawMessage `json:"input,omitempty"`
	Parent     json.RawMessage `json:"parent,omitempty"`
}

// outcome is the answer to one of this plugin's requests, as a script
// reports it.
type outcome struct {
	Output json.RawMessage `json:"output,omitempty"`
	Error  *protocol.Error `json:"error,omitempty"`
}

func main() {
	in := wire.NewFrameReader(os.Stdin, 0)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	for {
		m, err := in.ReadMessage()
		if err != nil {
			if err != io.EOF {
				fmt.Fprintln(os.Stderr, "caller: read:", err)
			}
			break
		}
		handle(ctx, m)
	}
	// stdin closed: cancel what still runs, let it answer, exit.
	serving.Range(func(_, v any) bool { v.(context.CancelFunc)(); return true })
	workers.Wait()
}

func handle(ctx context.Context, m *wire.Message) {
	switch {
	case m.IsResponse():
		if ch, ok := calls.LoadAndDelete(string(m.ID)); ok {
			ch.(chan *wire.Message) <- m
		}
	case m.Method == wire.MethodInitialize:
		initialize(m)
	case m.Method == wire.MethodPing, m.Method == wire.MethodShutdown:
		respond(m.ID, wire.Empty{})
	case m.Method == wire.MethodCancel:
		var p wire.CancelParams
		if json.Unmarshal(m.Params, &p) == nil {
			if cancel, ok := serving.Load(string(p.ID)); ok {
				cancel.(context.CancelFunc)()
			}
		}
	case m.Method == wire.MethodProviderInvoke:
		var p wire.ProviderInvokeParams
		_ = json.Unmarshal(m.Params, &p)
		rctx, cancel := context.WithCancel(ctx)
		serving.Store(string(m.ID), context.CancelFunc(cancel))
		workers.Add(1)
		go func() {
			defer workers.Done()
			defer serving.Delete(string(m.ID))
			defer cancel()
			run(rctx, m.ID, p, p.Traceparent)
		}()
	case m.IsRequest():
		fail(m.ID, &protocol.Error{Code: protocol.CodeMethodNotFound, Message: fmt.Sprintf("caller: no method %q", m.Method)})
	}
}

func initialize(m *wire.Message) {
	var p protocol.InitializeParams
	_ = json.Unmarshal(m.Params, &p)
	initMu.Lock()
	initParams = p
	initMu.Unlock()
	version := os.Getenv("CALLER_PROTOCOL")
	if version == "" {
		version = protocol.Version
	}
	res := protocol.InitializeResult{ProtocolVersion: version, Name: p.Plugin.Name, Version: p.Plugin.Version,
		Providers: []protocol.ProviderDecl{{Ref: "run", Description: "runs its input as a script"}},
		Features:  p.Features} // every feature the host serves (protocol 1.4)
	switch f := os.Getenv("CALLER_FEATURES"); f {
	case "":
	case "none":
		res.Features = []string{}
	default:
		res.Features = strings.Split(f, ",")
	}
	for _, ref := range list("CALLER_PROVIDERS") {
		res.Providers = append(res.Providers, protocol.ProviderDecl{Ref: ref})
	}
	for _, kv := range list("CALLER_PROVIDES") {
		k, v, _ := strings.Cut(kv, "@")
		res.Provides = append(res.Provides, protocol.CapabilityDecl{Capability: k, Version: v})
	}
	respond(m.ID, res)
}

func list(env string) []string {
	if v := os.Getenv(env); v != "" {
		return strings.Split(v, ",")
	}
	return nil
}

// run acts on the script of the request id, with params p, and answers it.
func run(ctx context.Context, id json.RawMessage, p wire.ProviderInvokeParams, traceparent string) {
	input := p.Input
	var s script
	if err := json.Unmarshal(input, &s); err != nil && len(input) > 0 {
		fail(id, &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("caller: input is not a script: %v", err)})
		return
	}
	if s.Notify != "" {
		notify(s.Notify)
	}
	switch {
	case s.Crash:
		fmt.Fprintln(os.Stderr, "caller: crashing as told")
		os.Exit(3)
	case s.Init:
		initMu.Lock()
		v := initParams.ProtocolVersion
		initMu.Unlock()
		respond(id, wire.OutputResult{Output: mustJSON(v)})
	case s.Block:
		<-ctx.Done()
		notify("cancelled")
		fail(id, &protocol.Error{Code: protocol.CodeRequestCancelled, Message: "caller: cancelled"})
	case s.Fail != "":
		fail(id, &protocol.Error{Code: protocol.CodePluginError, Message: s.Fail})
	case s.Request != "":
		respond(id, wire.OutputResult{Output: mustJSON(request(ctx, s.Request, wire.Empty{}, false, func() {}))})
	case s.Call != nil:
		respond(id, wire.OutputResult{Output: mustJSON(callAll(ctx, id, s, traceparent))})
	case s.Progress > 0:
		for range s.Progress {
			send(&wire.Message{JSONRPC: wire.JSONRPCVersion, Method: wire.MethodProgress, Params: mustJSON(wire.ProgressParams{ID: id})})
		}
		respond(id, wire.OutputResult{Output: mustJSON(map[string]int{"progressed": s.Progress})})
	case s.Chunks > 0 && p.Stream == nil:
		respond(id, wire.OutputResult{Output: mustJSON(map[string]bool{"streamed": false})})
	case s.Chunks > 0:
		for seq := 1; seq <= min(s.Chunks, p.Stream.Window); seq++ {
			send(&wire.Message{JSONRPC: wire.JSONRPCVersion, Method: wire.MethodStreamChunk,
				Params: mustJSON(wire.StreamChunkParams{ID: id, Seq: int64(seq), Data: mustJSON(seq)})})
		}
		respond(id, wire.Empty{})
	case traceparent != "":
		respond(id, wire.OutputResult{Output: mustJSON(map[string]any{"echo": s.Echo, "traceparent": traceparent})})
	default:
		respond(id, wire.OutputResult{Output: mustJSON(map[string]json.RawMessage{"echo": s.Echo})})
	}
}

// callAll sends the script's call (Fanout times, at once) and returns the
// outcome, or the list of outcomes.
func callAll(ctx context.Context, serving json.RawMessage, s script, traceparent string) any {
	p := wire.CapabilityCallParams{Capability: s.Call.Capability, Method: s.Call.Method, Input: s.Call.Input, Traceparent: traceparent}
	switch parent := strings.TrimSpace(string(s.Call.Parent)); parent {
	case "":
	case "true":
		p.Parent = serving
	default:
		p.Parent = s.Call.Parent
	}
	if s.Fanout <= 0 {
		return request(ctx, wire.MethodCapabilityCall, p, s.Cancel, func() {})
	}
	outs := make([]outcome, s.Fanout)
	var wg, sent sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		sent.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = request(ctx, wire.MethodCapabilityCall, p, s.Cancel, sent.Done)
		}()
	}
	sent.Wait()
	notify("fanned-out")
	wg.Wait()
	return outs
}

// request sends a request, calls sent once it is written, and waits for
// its answer, or for ctx (the request being served) to end; cancel sends
// $/cancel for it at once.
func request(ctx context.Context, method string, params any, cancel bool, sent func()) outcome {
	id := mustJSON("c" + strconv.FormatInt(nextID.Add(1), 10))
	ch := make(chan *wire.Message, 1)
	calls.Store(string(id), ch)
	send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: id, Method: method, Params: mustJSON(params)})
	sent()
	if cancel {
		send(&wire.Message{JSONRPC: wire.JSONRPCVersion, Method: wire.MethodCancel, Params: mustJSON(wire.CancelParams{ID: id})})
	}
	var m *wire.Message
	select {
	case m = <-ch:
	case <-ctx.Done():
		calls.Delete(string(id))
		return outcome{Error: &protocol.Error{Code: protocol.CodeRequestCancelled, Message: "caller: gave up waiting: the request it serves ended"}}
	}
	if m.Error != nil {
		return outcome{Error: m.Error}
	}
	var res wire.OutputResult
	_ = json.Unmarshal(m.Result, &res)
	return outcome{Output: res.Output}
}

func notify(event string) {
	send(&wire.Message{JSONRPC: wire.JSONRPCVersion, Method: wire.MethodNotify,
		Params: mustJSON(wire.NotifyParams{Event: event, Data: mustJSON(map[string]string{"plugin": name})})})
}

func respond(id json.RawMessage, result any) {
	send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: id, Result: mustJSON(result)})
}

func fail(id json.RawMessage, e *protocol.Error) {
	send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: id, Error: e})
}

func send(m *wire.Message) {
	if err := out.WriteMessage(m); err != nil {
		fmt.Fprintln(os.Stderr, "caller: write:", err)
		os.Exit(1)
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
