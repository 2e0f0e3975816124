package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

// These tests hold docs/protocol.md's examples to the code: they fail when
// an example no longer matches what the types accept or what the code
// prints.

const protocolDoc = "../docs/protocol.md"

// readDoc returns docs/protocol.md.
func readDoc(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// docFrame is one frame of a fenced json example: its line in the doc,
// its direction ("host → memory", empty when none) and its text.
type docFrame struct {
	line     int
	from, to string
	text     string
}

// arrow is the "host → memory  " prefix of an example frame.
var arrow = regexp.MustCompile(`^(\S+) → (\S+)\s+`)

// docFrames returns every frame of doc's fenced json blocks: a line that
// is a JSON-RPC message, after its direction if any.
func docFrames(doc string) []docFrame {
	var frames []docFrame
	in := false
	for i, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "```json"):
			in = true
			continue
		case strings.HasPrefix(line, "```"):
			in = false
			continue
		case !in:
			continue
		}
		f := docFrame{line: i + 1, text: line}
		if m := arrow.FindStringSubmatch(line); m != nil {
			f.from, f.to, f.text = m[1], m[2], line[len(m[0]):]
		}
		if strings.HasPrefix(f.text, `{"jsonrpc"`) {
			frames = append(frames, f)
		}
	}
	return frames
}

// paramsOf maps each method of the examples to the type its params decode
// into.
var paramsOf = map[string]func() any{
	wire.MethodInitialize:         func() any { return new(protocol.InitializeParams) },
	wire.MethodIntercept:          func() any { return new(wire.InterceptParams) },
	wire.MethodStrategyInvoke:     func() any { return new(wire.StrategyInvokeParams) },
	wire.MethodProviderInvoke:     func() any { return new(wire.ProviderInvokeParams) },
	wire.MethodActionRun:          func() any { return new(wire.ActionRunParams) },
	wire.MethodContributionInvoke: func() any { return new(wire.ContributionInvokeParams) },
	wire.MethodCapabilityCall:     func() any { return new(wire.CapabilityCallParams) },
	wire.MethodCancel:             func() any { return new(wire.CancelParams) },
	wire.MethodStreamChunk:        func() any { return new(wire.StreamChunkParams) },
	wire.MethodStreamAck:          func() any { return new(wire.StreamAckParams) },
	wire.MethodNotify:             func() any { return new(wire.NotifyParams) },
	wire.MethodLog:                func() any { return new(wire.LogParams) },
	wire.MethodProgress:           func() any { return new(wire.ProgressParams) },
}

// strict decodes raw into v, refusing members v does not know.
func strict(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// TestDocFrames checks every frame of protocol.md's examples: a valid
// JSON-RPC message whose params decode into the method's type with no
// unknown member, a protocol_version that is this one (protocol.Version),
// an initialize result that decodes into protocol.InitializeResult, and a
// stream request sent by the host carrying window_bytes, as the host
// always sends it (§5.12).
func TestDocFrames(t *testing.T) {
	frames := docFrames(readDoc(t))
	if len(frames) < 30 {
		t.Fatalf("found %d example frames in %s; the extraction broke", len(frames), protocolDoc)
	}
	versions := regexp.MustCompile(`"protocol_version":"([^"]*)"`)
	for _, f := range frames {
		var m wire.Message
		if err := wire.DecodeMessage([]byte(f.text), &m); err != nil {
			t.Errorf("%s:%d: not a message: %v", protocolDoc, f.line, err)
			continue
		}
		for _, v := range versions.FindAllStringSubmatch(f.text, -1) {
			if v[1] != protocol.Version {
				t.Errorf("%s:%d: protocol_version %q; the examples show this protocol, %s", protocolDoc, f.line, v[1], protocol.Version)
			}
		}
		switch {
		case m.Method != "":
			newParams, ok := paramsOf[m.Method]
			if !ok {
				t.Errorf("%s:%d: method %q is no method of the protocol", protocolDoc, f.line, m.Method)
				continue
			}
			p := newParams()
			if err := strict(m.Params, p); err != nil {
				t.Errorf("%s:%d: %s params: %v", protocolDoc, f.line, m.Method, err)
			}
			if pi, ok := p.(*wire.ProviderInvokeParams); ok && pi.Stream != nil && f.from == "host" && pi.Stream.WindowBytes == 0 {
				t.Errorf("%s:%d: the host asks for a stream without window_bytes; it always sends it (§5.12)", protocolDoc, f.line)
			}
		case m.Result != nil && bytes.Contains(m.Result, []byte(`"protocol_version"`)):
			if err := strict(m.Result, new(protocol.InitializeResult)); err != nil {
				t.Errorf("%s:%d: initialize result: %v", protocolDoc, f.line, err)
			}
		}
	}
}

// TestDocMessages checks the error messages protocol.md quotes against
// the code that prints them.
func TestDocMessages(t *testing.T) {
	doc := readDoc(t)
	for _, want := range []string{
		"`" + wire.NotAuthorized("memory", "billing", "charge").Message + "`",
		"`" + wire.NotAvailable("memory", "telemetry", "send", "optional requirement not satisfied").Message + "`",
		"`" + protocol.NewVersionError(">=2.0.0", "host").Error() + "`",
		`"message":"` + sdkCancelled(t) + `"`,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("%s does not quote %s, which the code prints", protocolDoc, want)
		}
	}
}

// sdkCancelled returns the message the Go SDK answers a provider/invoke
// cancelled by the host with.
func sdkCancelled(t *testing.T) string {
	t.Helper()
	p := sdk.New("gen", "1.0.0")
	p.SetLogger(nil)
	p.Provider("slow", "", func(ctx context.Context, _ json.RawMessage) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.ServeIO(ctx, inR, outW); outW.Close() }()
	fw, fr := wire.NewFrameWriter(inW), wire.NewFrameReader(outR, 0)
	answers := make(chan string, 1)
	go func() { // reads every frame, so that the SDK never waits to write
		defer close(answers)
		for {
			m, err := fr.ReadMessage()
			if err != nil {
				return
			}
			if string(m.ID) == "41" && m.Error != nil {
				answers <- m.Error.Message
			}
		}
	}()
	send := func(m *wire.Message, err error) {
		if err == nil {
			err = fw.WriteMessage(m)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	send(request("1", wire.MethodInitialize, protocol.InitializeParams{ProtocolVersion: protocol.Version}))
	send(request("41", wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "slow"}))
	send(wire.NewNotification(wire.MethodCancel, wire.CancelParams{ID: json.RawMessage("41")}))
	msg, ok := <-answers
	inW.Close()
	<-done
	for range answers {
	}
	if !ok {
		t.Fatal("the SDK did not answer the cancelled call with an error")
	}
	return msg
}

// request returns the request id of method with params.
func request(id, method string, params any) (*wire.Message, error) {
	raw, err := json.Marshal(params)
	return &wire.Message{JSONRPC: wire.JSONRPCVersion, ID: json.RawMessage(id), Method: method, Params: raw}, err
}
