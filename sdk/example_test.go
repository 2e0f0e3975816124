package sdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"log/slog"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

// A plugin that redacts secrets before tools run and provides a word
// counter. A real plugin ends main with p.Serve(); here ServeIO plays it
// against a scripted host.
func Example() {
	p := sdk.New("redactor", "1.0.0")
	p.SetLogger(slog.New(slog.DiscardHandler)) // keep the example's stderr quiet
	p.Provide("text.redact", "1.0.0")
	p.Intercept("tool.before", func(ctx context.Context, point string, payload json.RawMessage) (protocol.InterceptResult, error) {
		var in struct{ Command string }
		if err := json.Unmarshal(payload, &in); err != nil {
			return protocol.InterceptResult{}, fmt.Errorf("decode payload: %w", err)
		}
		if strings.Contains(in.Command, "API_KEY=") {
			return sdk.Modify(map[string]string{"command": "[redacted]"}), nil
		}
		return sdk.Continue(), nil
	})
	p.Provider("wordcount", "counts the words of a string", func(ctx context.Context, input json.RawMessage) (any, error) {
		var s string
		if err := json.Unmarshal(input, &s); err != nil {
			return nil, sdk.Errorf(protocol.CodeInvalidParams, "input must be a string: %v", err)
		}
		return len(strings.Fields(s)), nil
	})

	host := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.0.0","host":{"name":"demo","version":"0.1.0"},"plugin":{"name":"redactor","version":"1.0.0","data_dir":"/tmp/redactor"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"intercept","params":{"point":"tool.before","payload":{"command":"API_KEY=xyz make"}}}`,
	}, "\n")
	if err := p.ServeIO(context.Background(), strings.NewReader(host), os.Stdout); err != nil {
		fmt.Println("serve:", err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocol_version":"1.4.0","name":"redactor","version":"1.0.0","provides":[{"capability":"text.redact","version":"1.0.0"}],"interceptors":[{"point":"tool.before"}],"providers":[{"ref":"wordcount","description":"counts the words of a string"}],"features":["calls","cancel","contributions","progress","streams","trace"]}}
	// {"jsonrpc":"2.0","id":2,"result":{"decision":"modify","payload":{"command":"[redacted]"}}}
}

// A provider that answers from a capability the plugin requires: it calls
// storage.kv's get through the host. The handler's ctx makes the request
// it serves (id 2) the call's parent. The host is scripted: it answers the
// call when it sees it (the SDK's ids are "c1", "c2", ...), and the
// plugin reads that answer while its handler waits in Call.
func ExamplePlugin_Call() {
	p := sdk.New("memory", "1.0.0")
	p.SetLogger(slog.New(slog.DiscardHandler))
	p.Provider("recall", "recalls the note on a topic", func(ctx context.Context, input json.RawMessage) (any, error) {
		var in struct {
			Topic string `json:"topic"`
		}
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, sdk.Errorf(protocol.CodeInvalidParams, "input: %v", err)
		}
		note, err := p.Call(ctx, "storage.kv", "get", map[string]string{"key": in.Topic})
		var pe *protocol.Error
		if errors.As(err, &pe) && pe.Code == protocol.CodeNotAvailable {
			return map[string]any{"recalled": nil}, nil // an optional requirement, unsatisfied
		}
		if err != nil {
			return nil, err // keeps the host's code, e.g. CodeNotAuthorized
		}
		return map[string]json.RawMessage{"recalled": note}, nil
	})

	answers, host := io.Pipe()
	requests := strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.1.0","host":{"name":"demo","version":"0.1.0"},"plugin":{"name":"memory","version":"1.0.0","data_dir":"/tmp/memory"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"provider/invoke","params":{"ref":"recall","input":{"topic":"build"}}}`,
	}, "\n") + "\n")
	if err := p.ServeIO(context.Background(), io.MultiReader(requests, answers),
		scriptedHost{host, `{"jsonrpc":"2.0","id":"c1","result":{"output":"make -j8"}}` + "\n"}); err != nil {
		fmt.Println("serve:", err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocol_version":"1.4.0","name":"memory","version":"1.0.0","providers":[{"ref":"recall","description":"recalls the note on a topic"}],"features":["calls","cancel","contributions","progress","streams","trace"]}}
	// {"jsonrpc":"2.0","id":"c1","method":"capability/call","params":{"capability":"storage.kv","method":"get","input":{"key":"build"},"parent":2}}
	// {"jsonrpc":"2.0","id":2,"result":{"output":{"recalled":"make -j8"}}}
}

// scriptedHost prints what the plugin writes and plays the host of the
// examples that call it (ExamplePlugin_Call, ExamplePlugin_CallStream):
// it sends reply (the frames answering the plugin's call "c1") once it
// sees the call, and ends the input after the answer to 2. As a real
// host, it writes to the plugin independently of reading from it: the
// plugin reads the reply only once its request is written.
type scriptedHost struct {
	answers *io.PipeWriter
	reply   string
}

func (h scriptedHost) Write(frame []byte) (int, error) {
	os.Stdout.Write(frame)
	switch {
	case bytes.Contains(frame, []byte(`"method":"capability/call"`)):
		go io.WriteString(h.answers, h.reply)
	case bytes.HasPrefix(frame, []byte(`{"jsonrpc":"2.0","id":2,`)):
		h.answers.Close()
	}
	return len(frame), nil
}
