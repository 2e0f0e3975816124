package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestBuilders(t *testing.T) {
	req, err := NewRequest(json.RawMessage("3"), MethodProviderInvoke, ProviderInvokeParams{Ref: "r"})
	if err != nil {
		t.Fatal(err)
	}
	note, err := NewNotification(MethodCancel, CancelParams{ID: json.RawMessage("3")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := NewResult(json.RawMessage(`"a"`), struct{}{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		m    *Message
		want string
	}{
		{"request", req, `{"jsonrpc":"2.0","id":3,"method":"provider/invoke","params":{"ref":"r"}}`},
		{"notification", note, `{"jsonrpc":"2.0","method":"$/cancel","params":{"id":3}}`},
		{"result", res, `{"jsonrpc":"2.0","id":"a","result":{}}`},
		{"error", NewErrorResponse(nil, Errorf(CodeParseError, "bad %s", "line")), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad line"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.m)
			if err != nil || string(b) != tt.want {
				t.Fatalf("got %s, %v; want %s", b, err, tt.want)
			}
			var back Message
			if err := DecodeMessage(b, &back); err != nil {
				t.Fatalf("decode: %v", err)
			}
		})
	}
	if _, err := NewRequest(json.RawMessage("1"), MethodPing, func() {}); err == nil {
		t.Error("NewRequest with unmarshalable params succeeded")
	}
}

// TestAppendFrames holds AppendRequest and AppendResult to the bytes
// WriteMessage writes for the same message.
func TestAppendFrames(t *testing.T) {
	encode := func(m *Message) string {
		var buf bytes.Buffer
		if err := NewFrameWriter(&buf).WriteMessage(m); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(buf.String(), "\n")
	}
	for _, method := range []string{MethodProviderInvoke, "", `a"b\c`, "tab\there\n", "<&>", "caf\u00e9 \u2028", "bad \xff utf8", "\x00\x1f\x7f"} {
		for _, params := range []string{"", `{"ref":"echo","input":{"a":[1,2]}}`, `"<b>"`, "null"} {
			got := string(AppendRequest([]byte("x"), 42, method, []byte(params)))
			want := "x" + encode(&Message{JSONRPC: JSONRPCVersion, ID: json.RawMessage("42"), Method: method, Params: json.RawMessage(params)})
			if got != want {
				t.Errorf("AppendRequest(%q, %q) = %s, want %s", method, params, got, want)
			}
		}
	}
	for _, id := range []string{"7", `"a b"`, "null", "-1.5e3", `{"a" : [1, 2]}`, "[ 1 ,\r2 ]"} {
		for _, result := range []string{"{}", `{"output":{"a":"<b>"}}`, "null"} {
			got := string(AppendResult(nil, json.RawMessage(id), []byte(result)))
			want := encode(&Message{JSONRPC: JSONRPCVersion, ID: json.RawMessage(id), Result: json.RawMessage(result)})
			if got != want {
				t.Errorf("AppendResult(%q, %q) = %s, want %s", id, result, got, want)
			}
			var m Message
			if err := DecodeMessage([]byte(got), &m); err != nil {
				t.Errorf("AppendResult(%q, %q): %v", id, result, err)
			}
		}
	}
	if got := string(AppendResult(nil, nil, []byte("1"))); got != `{"jsonrpc":"2.0","id":null,"result":1}` {
		t.Errorf("AppendResult with no id = %s", got)
	}
}
