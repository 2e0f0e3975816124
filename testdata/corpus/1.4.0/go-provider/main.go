// Command go-provider is a Go plugin with no SDK, written against protocol
// 1.4.0: it answers initialize with exactly that version and uses
// nothing a later one added; it announces the one feature it uses
// ("progress") and uses it only when the host announced it. Frozen: see
// testdata/corpus/README.md; the test builds it, nothing built is kept.
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

const version = "1.4.0"

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Point    string          `json:"point"`
		Ref      string          `json:"ref"`
		ID       string          `json:"id"`
		Input    json.RawMessage `json:"input"`
		Features []string        `json:"features"` // initialize, protocol 1.4
	} `json:"params"`
}

var out = bufio.NewWriter(os.Stdout)

// hostProgress is set when the host announced the "progress" feature
// (protocol 1.4): the plugin tests the flag, not the host's version.
var hostProgress bool

func send(msg map[string]any) {
	data, _ := json.Marshal(msg)
	out.Write(append(data, '\n'))
	out.Flush()
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 4<<20)
	ready := false
	for in.Scan() {
		line := in.Bytes()
		if len(line) == 0 {
			continue
		}
		var raw any
		if err := json.Unmarshal(line, &raw); err != nil {
			send(map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{-32700, "parse error"}})
			continue
		}
		if _, ok := raw.(map[string]any); !ok {
			send(map[string]any{"jsonrpc": "2.0", "id": nil, "error": rpcError{-32600, "not a request"}})
			continue
		}
		var msg message
		json.Unmarshal(line, &msg)
		if msg.ID == nil || msg.Method == "" {
			continue // notifications ($/cancel), responses
		}
		var result any
		var rerr *rpcError
		switch {
		case msg.Method == "initialize":
			ready = true
			for _, f := range msg.Params.Features {
				hostProgress = hostProgress || f == "progress"
			}
			// x_corpus_future: a member no protocol version defines; the host ignores it.
			result = map[string]any{"protocol_version": version, "name": "go-provider", "version": "1.0.0",
				"providers": []map[string]any{{"ref": "echo", "description": "returns its input"}}, "x_corpus_future": true,
				"features": []string{"progress"}}
		case !ready:
			rerr = &rpcError{-32002, msg.Method + " before initialize"}
		default:
			result, rerr = handle(msg.ID, msg)
		}
		if rerr != nil {
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": rerr})
		} else {
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
		}
	}
}

func handle(id json.RawMessage, msg message) (any, *rpcError) {
	p := msg.Params
	switch msg.Method {
	case "provider/invoke":
		if p.Ref != "echo" {
			return nil, &rpcError{-32004, "unknown provider " + p.Ref}
		}
		// Protocol 1.3: report progress on the call, to a host that serves it.
		if hostProgress {
			send(map[string]any{"jsonrpc": "2.0", "method": "$/progress", "params": map[string]any{"id": id, "message": "echoing", "fraction": 0.5}})
		}
		return map[string]any{"output": p.Input}, nil
	case "ping", "shutdown":
		return map[string]any{}, nil
	}
	return nil, &rpcError{-32601, "unknown method " + msg.Method}
}
