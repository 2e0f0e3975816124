package protocol

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
