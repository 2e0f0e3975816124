// Command go-interceptor is a Go plugin with no SDK, written against protocol
// 1.4.0: it answers initialize with exactly that version and uses
// nothing a later one added. Frozen: see testdata/corpus/README.md; the
// test builds it, nothing built is kept.
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
		Point string          `json:"point"`
		Ref   string          `json:"ref"`
		ID    string          `json:"id"`
		Input json.RawMessage `json:"input"`
	} `json:"params"`
}

var out = bufio.NewWriter(os.Stdout)

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
			// x_corpus_future: a member no protocol version defines; the host ignores it.
			result = map[string]any{"protocol_version": version, "name": "go-interceptor", "version": "1.0.0",
				"interceptors": []map[string]any{{"point": "tool.before"}}, "x_corpus_future": true,
				"features": []string{}} // protocol 1.4: it uses no optional feature
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
	case "intercept":
		if p.Point != "tool.before" {
			return nil, &rpcError{-32004, "unknown point " + p.Point}
		}
		return map[string]any{"decision": "continue"}, nil
	case "ping", "shutdown":
		return map[string]any{}, nil
	}
	return nil, &rpcError{-32601, "unknown method " + msg.Method}
}
