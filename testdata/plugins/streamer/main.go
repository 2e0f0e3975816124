// Command streamer is the streams test plugin on the Go SDK (protocol 1.1,
// docs/protocol.md §5.12). sdk/testdata/streamer.py and streamer.js are
// the same plugin with the Python and Node.js SDKs; sdk/streamer_test.go
// holds the Go SDK's copy that the SDK tests serve in-process. Its name
// and version come from EXTKERNEL_PLUGIN_NAME and EXTKERNEL_PLUGIN_VERSION,
// and the capabilities it provides from SCRIPT_PROVIDES ("key@version,...",
// as the kernel tests' manifests set it), so one binary plays several
// packages.
//
// Providers:
//
//   - "count", a streaming provider. Its input {"n": N, "size": S,
//     "fail_at": F, "crash_at": C, "notify": true} (all optional) makes it
//     send the chunks 1..N: {"i": i}, or, with size, a JSON string of S
//     bytes ("xx..."). Before chunk F it fails with -32000 "failed at chunk
//     F"; before chunk C it exits with status 3; with notify, it sends the
//     notify "sent" {"i": i} after each chunk. When a send fails (the
//     request was cancelled) it sends the notify "closed" {"plugin": name}
//     and returns.
//   - "plain", a provider that answers {"plain": input}.
//   - "relay", which consumes a stream through the host (CallStream): its
//     input {"capability", "method", "input", "take": K, "delay_ms": D,
//     "report": R} names the call; it takes at most K chunks (all without
//     take), with R the notify "took" {"n": N} after the Nth, waiting D ms
//     after each, and answers {"chunks": [...]} with, when
//     the stream failed, "error": {"code", "message"} (code 0 for a local
//     failure).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

type countInput struct {
	N       int  `json:"n"`
	Size    int  `json:"size"`
	FailAt  int  `json:"fail_at"`
	CrashAt int  `json:"crash_at"`
	Notify  bool `json:"notify"`
}

type relayInput struct {
	Capability string          `json:"capability"`
	Method     string          `json:"method"`
	Input      json.RawMessage `json:"input,omitempty"`
	Take       int             `json:"take"`
	DelayMS    int             `json:"delay_ms"`
	Report     bool            `json:"report"`
}

type relayError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func main() {
	name := os.Getenv("EXTKERNEL_PLUGIN_NAME")
	p := sdk.New(name, os.Getenv("EXTKERNEL_PLUGIN_VERSION"))
	if v := os.Getenv("SCRIPT_PROVIDES"); v != "" {
		for _, kv := range strings.Split(v, ",") {
			k, ver, _ := strings.Cut(kv, "@")
			p.Provide(k, ver)
		}
	}
	p.StreamProvider("count", "streams the chunks its input asks for", func(ctx context.Context, raw json.RawMessage, send func(any) error) error {
		var in countInput
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &in); err != nil {
				return sdk.Errorf(protocol.CodeInvalidParams, "count: %v", err)
			}
		}
		var blob json.RawMessage
		if in.Size > 0 {
			blob = json.RawMessage(`"` + strings.Repeat("x", in.Size) + `"`)
		}
		for i := 1; i <= in.N; i++ {
			switch i {
			case in.CrashAt:
				fmt.Fprintln(os.Stderr, "streamer: crashing as told")
				os.Exit(3)
			case in.FailAt:
				return sdk.Errorf(protocol.CodePluginError, "failed at chunk %d", i)
			}
			var chunk any = map[string]int{"i": i}
			if blob != nil {
				chunk = blob
			}
			if err := send(chunk); err != nil {
				_ = p.Notify("closed", map[string]string{"plugin": name})
				return err
			}
			if in.Notify {
				_ = p.Notify("sent", map[string]int{"i": i})
			}
		}
		return nil
	})
	p.Provider("plain", "answers its input, without streaming", func(_ context.Context, in json.RawMessage) (any, error) {
		return map[string]json.RawMessage{"plain": in}, nil
	})
	p.Provider("relay", "consumes the stream its input names", func(ctx context.Context, raw json.RawMessage) (any, error) {
		var in relayInput
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, sdk.Errorf(protocol.CodeInvalidParams, "relay: %v", err)
		}
		var input any
		if in.Input != nil {
			input = in.Input
		}
		res := struct {
			Chunks []json.RawMessage `json:"chunks"`
			Error  *relayError       `json:"error,omitempty"`
		}{Chunks: []json.RawMessage{}}
		for chunk, err := range p.CallStream(ctx, in.Capability, in.Method, input) {
			if err != nil {
				var pe *protocol.Error
				res.Error = &relayError{Message: err.Error()}
				if errors.As(err, &pe) {
					res.Error.Code, res.Error.Message = pe.Code, pe.Message
				}
				break
			}
			res.Chunks = append(res.Chunks, chunk)
			if in.Report {
				_ = p.Notify("took", map[string]int{"n": len(res.Chunks)})
			}
			if in.Take > 0 && len(res.Chunks) == in.Take {
				break
			}
			if in.DelayMS > 0 && !pause(ctx, time.Duration(in.DelayMS)*time.Millisecond) {
				break
			}
		}
		return res, nil
	})
	p.Serve()
}

// pause waits d, the pace of a slow consumer, or until ctx ends; it
// reports whether d passed.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
