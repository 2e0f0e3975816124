package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadMessage(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		max     int
		want    []string // methods or ids read before the end
		wantErr string
	}{
		{name: "two messages", in: `{"jsonrpc":"2.0","method":"log","params":{}}` + "\n" + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n", want: []string{"log", "1"}},
		{name: "blank lines skipped", in: "\n\r\n" + `{"jsonrpc":"2.0","method":"ping","id":2}` + "\r\n", want: []string{"ping"}},
		{name: "unterminated last line", in: `{"jsonrpc":"2.0","method":"ping","id":2}`, want: []string{"ping"}},
		{name: "banner", in: "Starting plugin v2...\n", wantErr: `line 1: not a JSON-RPC message: "Starting plugin v2..."`},
		{name: "invalid json", in: "{\"jsonrpc\":\n", wantErr: `line 1: not a JSON-RPC message: unexpected end of JSON input: "{\"jsonrpc\":"`},
		{name: "wrong version", in: `{"jsonrpc":"1.0","id":1,"result":1}` + "\n", wantErr: `line 1: not a JSON-RPC 2.0 message: jsonrpc is "1.0"`},
		{name: "no method no id", in: `{"jsonrpc":"2.0"}` + "\n", wantErr: `line 1: invalid message: neither method nor id`},
		{name: "response without result", in: `{"jsonrpc":"2.0","id":3}` + "\n", wantErr: `line 1: invalid response: neither result nor error`},
		{name: "too large", in: `{"jsonrpc":"2.0","method":"log","params":"` + strings.Repeat("x", 100) + "\"}\n", max: 64, wantErr: "line 1: frame exceeds size limit (64 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := NewFrameReader(strings.NewReader(tt.in), tt.max)
			var got []string
			var err error
			for {
				var m *Message
				m, err = fr.ReadMessage()
				if err != nil {
					break
				}
				if m.Method != "" {
					got = append(got, m.Method)
				} else {
					got = append(got, string(m.ID))
				}
			}
			if tt.wantErr == "" {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("err = %v, want io.EOF", err)
				}
			} else if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want prefix %q", err, tt.wantErr)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("read %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFrameTooLargeIsTyped(t *testing.T) {
	fr := NewFrameReader(strings.NewReader(strings.Repeat("a", 200)+"\n"), 100)
	_, err := fr.ReadFrame()
	var fe *FrameError
	if !errors.As(err, &fe) || !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want *FrameError wrapping ErrFrameTooLarge", err)
	}
}

func TestWriteMessageRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	fw := NewFrameWriter(&buf)
	in := &Message{JSONRPC: JSONRPCVersion, ID: []byte("7"), Method: MethodPing, Params: []byte(`{"a":"<b>"}`)}
	if err := fw.WriteMessage(in); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":"<b>"}}`+"\n"; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
	m, err := NewFrameReader(&buf, 0).ReadMessage()
	if err != nil || m.Method != MethodPing || string(m.ID) != "7" {
		t.Fatalf("read back %+v, %v", m, err)
	}
}

// TestDecodeMessageDuplicateMembers checks that a frame holding an
// envelope member twice, in any spelling encoding/json would match to it,
// is refused (json.Unmarshal keeps the last, so {"id":1,"id":2} answered
// request 2), and that repeats elsewhere are left to the decoding.
func TestDecodeMessageDuplicateMembers(t *testing.T) {
	tests := []struct {
		name string
		line string
		dup  string // the member refused, or "" when the frame is accepted
	}{
		{name: "id twice", line: `{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`, dup: "id"},
		{name: "id in another case", line: `{"jsonrpc":"2.0","id":1,"ID":2,"result":{}}`, dup: "id"},
		{name: "id escaped", line: `{"jsonrpc":"2.0","i\u0064":1,"id":2,"result":{}}`, dup: "id"},
		{name: "jsonrpc with a folding s", line: `{"jsonrpc":"2.0","j` + "\u017f" + `onrpc":"2.0","id":1,"result":{}}`, dup: "jsonrpc"},
		{name: "result twice", line: `{"jsonrpc":"2.0","id":1,"result":{"output":1},"result":{"output":2}}`, dup: "result"},
		{name: "error twice", line: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"a"},"error":{"code":2,"message":"b"}}`, dup: "error"},
		{name: "method twice", line: `{"jsonrpc":"2.0","method":"ping","method":"shutdown","id":1}`, dup: "method"},
		{name: "params twice", line: `{"jsonrpc":"2.0","method":"log","params":{},"params":{}}`, dup: "params"},
		{name: "repeat inside result", line: `{"jsonrpc":"2.0","id":1,"result":{"id":1,"id":2}}`},
		{name: "unknown member twice", line: `{"jsonrpc":"2.0","id":1,"result":{},"x":1,"x":2}`},
		{name: "error answer", line: `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Message
			err := DecodeMessage([]byte(tt.line), &m)
			if tt.dup == "" {
				if err != nil {
					t.Fatalf("DecodeMessage: %v", err)
				}
				return
			}
			want := `invalid message: duplicate member "` + tt.dup + `"`
			if !errors.Is(err, ErrDuplicateMember) || err.Error() != want {
				t.Fatalf("DecodeMessage = %v, want %q wrapping ErrDuplicateMember", err, want)
			}
		})
	}
}
