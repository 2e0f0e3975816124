package wire

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/extkernel/extkernel/protocol"
)

func TestBuilders(t *testing.T) {
	note, err := NewNotification(MethodCancel, CancelParams{ID: json.RawMessage("3")})
	if err != nil {
		t.Fatal(err)
	}
	bare, err := NewNotification(MethodPing, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		m    *Message
		want string
	}{
		{"notification", note, `{"jsonrpc":"2.0","method":"$/cancel","params":{"id":3}}`},
		{"notification without params", bare, `{"jsonrpc":"2.0","method":"ping"}`},
		{"error", NewErrorResponse(nil, &protocol.Error{Code: CodeParseError, Message: fmt.Sprintf("bad %s", "line")}), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad line"}}`},
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
	if _, err := NewNotification(MethodPing, func() {}); err == nil {
		t.Error("NewNotification with unmarshalable params succeeded")
	}
}
