package sdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"log/slog"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

// A streaming provider: it sends the words of its input one chunk at a
// time. The host asks for a stream of window 2 and acknowledges each
// chunk as it consumes it, so the handler's third send waits for the ack
// of the first one. The host is scripted: it acks each chunk when it sees
// it, and ends the input after the answer to 2.
func ExamplePlugin_StreamProvider() {
	p := sdk.New("words", "1.0.0")
	p.SetLogger(slog.New(slog.DiscardHandler))
	p.StreamProvider("split", "streams the words of a string", func(ctx context.Context, input json.RawMessage, send func(any) error) error {
		var s string
		if err := json.Unmarshal(input, &s); err != nil {
			return sdk.Errorf(protocol.CodeInvalidParams, "input must be a string: %v", err)
		}
		for _, w := range strings.Fields(s) {
			if err := send(w); err != nil {
				return err // the host cancelled: stop
			}
		}
		return nil
	})

	acks, host := io.Pipe()
	requests := strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.1.0","host":{"name":"demo","version":"0.1.0"},"plugin":{"name":"words","version":"1.0.0","data_dir":"/tmp/words"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"provider/invoke","params":{"ref":"split","input":"make it so","stream":{"window":2}}}`,
	}, "\n") + "\n")
	if err := p.ServeIO(context.Background(), io.MultiReader(requests, acks), ackingHost{host}); err != nil {
		fmt.Println("serve:", err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocol_version":"1.4.0","name":"words","version":"1.0.0","providers":[{"ref":"split","description":"streams the words of a string"}],"features":["calls","cancel","contributions","progress","streams","trace"]}}
	// {"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":2,"seq":1,"data":"make"}}
	// {"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":2,"seq":2,"data":"it"}}
	// {"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":2,"seq":3,"data":"so"}}
	// {"jsonrpc":"2.0","id":2,"result":{}}
}

// ackingHost prints what the plugin writes and plays
// ExamplePlugin_StreamProvider's host.
type ackingHost struct{ acks *io.PipeWriter }

func (h ackingHost) Write(frame []byte) (int, error) {
	os.Stdout.Write(frame)
	var m struct {
		Method string
		Params struct{ Seq int }
	}
	_ = json.Unmarshal(frame, &m)
	switch {
	case m.Method == "$/stream/chunk":
		fmt.Fprintf(h.acks, `{"jsonrpc":"2.0","method":"$/stream/ack","params":{"id":2,"seq":%d}}`+"\n", m.Params.Seq)
	case bytes.HasPrefix(frame, []byte(`{"jsonrpc":"2.0","id":2,`)):
		h.acks.Close()
	}
	return len(frame), nil
}

// A provider that consumes a stream through the host: it ranges over the
// chunks of text.generate's tokens (CallStream) and answers them joined.
// The handler's ctx makes its request (id 2) the call's parent; breaking
// out of the range would cancel the call. The host is scripted: it
// answers the call with three chunks and the end.
func ExamplePlugin_CallStream() {
	p := sdk.New("summary", "1.0.0")
	p.SetLogger(slog.New(slog.DiscardHandler))
	p.Provider("summarize", "joins the tokens of text.generate", func(ctx context.Context, input json.RawMessage) (any, error) {
		var text strings.Builder
		for chunk, err := range p.CallStream(ctx, "text.generate", "tokens", input) {
			if err != nil {
				return nil, err // keeps the host's code, e.g. CodeNotAvailable
			}
			var token string
			if err := json.Unmarshal(chunk, &token); err != nil {
				return nil, fmt.Errorf("token %s: %w", chunk, err)
			}
			text.WriteString(token)
		}
		return text.String(), nil
	})

	answers, host := io.Pipe()
	requests := strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.1.0","host":{"name":"demo","version":"0.1.0"},"plugin":{"name":"summary","version":"1.0.0","data_dir":"/tmp/summary"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"provider/invoke","params":{"ref":"summarize","input":{"prompt":"hi"}}}`,
	}, "\n") + "\n")
	var chunks strings.Builder
	for i, token := range []string{"Hel", "lo", "!"} {
		fmt.Fprintf(&chunks, `{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":"c1","seq":%d,"data":%q}}`+"\n", i+1, token)
	}
	chunks.WriteString(`{"jsonrpc":"2.0","id":"c1","result":{}}` + "\n")
	if err := p.ServeIO(context.Background(), io.MultiReader(requests, answers), scriptedHost{host, chunks.String()}); err != nil {
		fmt.Println("serve:", err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocol_version":"1.4.0","name":"summary","version":"1.0.0","providers":[{"ref":"summarize","description":"joins the tokens of text.generate"}],"features":["calls","cancel","contributions","progress","streams","trace"]}}
	// {"jsonrpc":"2.0","id":"c1","method":"capability/call","params":{"capability":"text.generate","method":"tokens","input":{"prompt":"hi"},"parent":2,"stream":{"window":16}}}
	// {"jsonrpc":"2.0","id":2,"result":{"output":"Hello!"}}
}
