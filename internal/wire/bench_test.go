package wire

import (
	"encoding/json"
	"testing"

	"github.com/extkernel/extkernel/protocol"
)

// The decoding benchmarks decode the frames of one call as the host and
// the SDK see them, each with every decoder: the hand path (DecodeMessage
// and Decode, as sidecar and sdk do), encoding/json, and, built with
// GOEXPERIMENT=jsonv2, encoding/json/v2 (bench_jsonv2_test.go). Run:
//
//	go test -run '^$' -bench Decode ./internal/wire/
//	GOEXPERIMENT=jsonv2 go test -run '^$' -bench Decode ./internal/wire/
//
// Under GOEXPERIMENT=jsonv2, encoding/json is itself implemented on v2, so
// its figures move too; compare within one run.

// benchInput is the input of sidecar's call benchmarks.
const benchInput = `{"tool":"read_file","args":{"path":"/tmp/notes.txt","limit":100}}`

var (
	// requestFrame is a provider/invoke request as the host writes it.
	requestFrame = AppendRequest(nil, 7, MethodProviderInvoke, []byte(`{"ref":"echo","input":`+benchInput+`}`))
	// responseFrame is its answer as the SDK writes it.
	responseFrame = AppendResult(nil, json.RawMessage("7"), []byte(`{"output":`+benchInput+`}`))
	// initResultFrame is a plugin's answer to initialize with one
	// declaration of each kind.
	initResultFrame = AppendResult(nil, json.RawMessage("1"), []byte(initResultCase))
)

// decoder decodes one frame into a Message, then its params or result.
type decoder struct {
	name    string
	message func(line []byte, m *Message) error
	value   func(data []byte, v any) error
}

// decoders are the decoders compared; bench_jsonv2_test.go adds v2's.
var decoders = []decoder{
	{name: "hand", message: DecodeMessage, value: Decode},
	{name: "encoding-json", message: func(line []byte, m *Message) error {
		*m = Message{}
		return json.Unmarshal(line, m)
	}, value: json.Unmarshal},
}

// benchDecode decodes frame and its params (request) or result
// (response) into a fresh value made by target, per iteration.
func benchDecode(b *testing.B, frame []byte, target func() any) {
	for _, d := range decoders {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			var m Message
			for b.Loop() {
				if err := d.message(frame, &m); err != nil {
					b.Fatal(err)
				}
				data := m.Params
				if data == nil {
					data = m.Result
				}
				if err := d.value(data, target()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeRequest is the SDK's side of a call: a provider/invoke
// frame and its params.
func BenchmarkDecodeRequest(b *testing.B) {
	benchDecode(b, requestFrame, func() any { return new(ProviderInvokeParams) })
}

// BenchmarkDecodeResponse is the host's side of a call: the response frame
// and its output.
func BenchmarkDecodeResponse(b *testing.B) {
	benchDecode(b, responseFrame, func() any { return new(OutputResult) })
}

// BenchmarkDecodeInitializeResult is the host's side of a handshake: the
// answer to initialize and its declarations.
func BenchmarkDecodeInitializeResult(b *testing.B) {
	benchDecode(b, initResultFrame, func() any { return new(protocol.InitializeResult) })
}

// TestDecodersAgree checks that every benchmarked decoder decodes the
// benchmark frames to the same values, so the benchmarks compare like
// with like.
func TestDecodersAgree(t *testing.T) {
	frames := []struct {
		name   string
		frame  []byte
		target func() any
	}{
		{"request", requestFrame, func() any { return new(ProviderInvokeParams) }},
		{"response", responseFrame, func() any { return new(OutputResult) }},
		{"initialize result", initResultFrame, func() any { return new(protocol.InitializeResult) }},
	}
	for _, f := range frames {
		t.Run(f.name, func(t *testing.T) {
			var want string
			for _, d := range decoders {
				var m Message
				if err := d.message(f.frame, &m); err != nil {
					t.Fatalf("%s: %v", d.name, err)
				}
				data := m.Params
				if data == nil {
					data = m.Result
				}
				v := f.target()
				if err := d.value(data, v); err != nil {
					t.Fatalf("%s: %v", d.name, err)
				}
				got, _ := json.Marshal([]any{m, v})
				if want == "" {
					want = string(got)
				} else if string(got) != want {
					t.Errorf("%s decodes to %s, %s to %s", d.name, got, decoders[0].name, want)
				}
			}
		})
	}
}
