// Command floor is the hand-written floor of the sidecar benchmarks: the
// least a plugin can do to speak the protocol, with the standard library
// only (no SDK). It reads newline-delimited JSON-RPC from stdin and writes
// one response per request to stdout, each with a single write:
//
//   - initialize is answered with the same ten declarations as
//     testdata/bench/sdkplugin, under the name and version the host puts in
//     EXTKERNEL_PLUGIN_NAME and EXTKERNEL_PLUGIN_VERSION;
//   - provider/invoke, strategy/invoke and action/run echo their input as
//     the output; intercept answers continue; ping and shutdown answer {};
//   - other requests get a method-not-found error, notifications are
//     ignored.
//
// Requests are handled one at a time, in the read loop, with no goroutine
// per call. It exits at the end of stdin.
//
// With the single argument "raw" it echoes every line back unchanged, with
// no JSON at all: the floor of the floor, the cost of the pipes alone.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
)

// declarations is the tail of the initialize result, after name and
// version: the same ten declarations testdata/bench/sdkplugin makes.
const declarations = `"provides":[{"capability":"bench.echo","version":"1.0.0"},{"capability":"bench.kv","version":"1.0.0"}],` +
	`"interceptors":[{"point":"tool.before"},{"point":"tool.after"},{"point":"model.request"}],` +
	`"strategies":[{"slot":"context.compactor"}],` +
	`"providers":[{"ref":"echo","description":"returns its input"},{"ref":"upper","description":"upper-cases a string"},{"ref":"size","description":"returns the input's length in bytes"}],` +
	`"actions":[{"id":"greet","title":"Greet","placement":"toolbar"}]`

// request is the part of a message the floor reads.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// invokeParams covers the params of provider/invoke and strategy/invoke
// (input) and action/run (context).
type invokeParams struct {
	Input   json.RawMessage `json:"input"`
	Context json.RawMessage `json:"context"`
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	raw := len(os.Args) == 2 && os.Args[1] == "raw"
	var out []byte
	for {
		line, err := in.ReadSlice('\n')
		if err != nil {
			if err == bufio.ErrBufferFull {
				fmt.Fprintln(os.Stderr, "floor: line over 1 MiB")
				os.Exit(1)
			}
			return // end of input
		}
		if raw {
			out = append(out[:0], line...)
		} else if out = answer(out[:0], line); len(out) == 0 {
			continue
		}
		if _, err := os.Stdout.Write(out); err != nil {
			os.Exit(1)
		}
	}
}

// answer appends the response to line to out, or nothing for a
// notification.
func answer(out, line []byte) []byte {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return append(out, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`+"\n"...)
	}
	if len(req.ID) == 0 {
		return out
	}
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, req.ID...)
	switch req.Method {
	case "initialize":
		out = append(out, `,"result":{"protocol_version":"1.0.0","name":`...)
		out = strconv.AppendQuote(out, os.Getenv("EXTKERNEL_PLUGIN_NAME"))
		out = append(out, `,"version":`...)
		out = strconv.AppendQuote(out, os.Getenv("EXTKERNEL_PLUGIN_VERSION"))
		out = append(out, ","+declarations+"}}\n"...)
	case "provider/invoke", "strategy/invoke", "action/run":
		var p invokeParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return append(out, `,"error":{"code":-32602,"message":"invalid params"}}`+"\n"...)
		}
		output := p.Input
		if req.Method == "action/run" {
			output = p.Context
		}
		if len(output) == 0 {
			return append(out, `,"result":{}}`+"\n"...)
		}
		out = append(out, `,"result":{"output":`...)
		out = append(out, output...)
		out = append(out, "}}\n"...)
	case "intercept":
		out = append(out, `,"result":{"decision":"continue"}}`+"\n"...)
	case "ping", "shutdown":
		out = append(out, `,"result":{}}`+"\n"...)
	default:
		out = append(out, `,"error":{"code":-32601,"message":"method not found"}}`+"\n"...)
	}
	return out
}
