package protocol

import (
	"encoding/json"
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
