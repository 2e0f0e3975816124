package hostcap

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
)

// Size bounds of what a handler serves.
const (
	// DefaultMaxBytes is a handler's size bound when its config sets none:
	// 1 MiB.
	DefaultMaxBytes = 1 << 20
	// MaxMaxBytes is the largest size bound a config may set: 2 MiB, so
	// that an answer, base64-encoded, fits a frame (4 MiB).
	MaxMaxBytes = 2 << 20
)

// The reasons of a refusal or failure, in its error's Data.
const (
	reasonDenied   = "denied"
	reasonTooLarge = "too_large"
	reasonNotFound = "not_found"
	reasonFailed   = "failed"
)

// content is the part of an answer carrying data.
type content struct {
	Size     int    `json:"size"`
	Encoding string `json:"encoding"`
	Content  string `json:"content"`
}

// contentOf encodes data: as text when it is valid UTF-8, else base64.
func contentOf(data []byte) content {
	if utf8.Valid(data) {
		return content{Size: len(data), Encoding: "utf-8", Content: string(data)}
	}
	return content{Size: len(data), Encoding: "base64", Content: base64.StdEncoding.EncodeToString(data)}
}

// refusal is a refusal or failure of key's call, as the plugin receives
// it: -32000 with the reason in its data.
func refusal(key, reason, format string, a ...any) *protocol.Error {
	data, _ := json.Marshal(map[string]string{"reason": reason})
	return &protocol.Error{Code: protocol.CodePluginError, Message: key + ": " + fmt.Sprintf(format, a...), Data: data}
}

// badInput answers input the method cannot take.
func badInput(format string, a ...any) *protocol.Error {
	return &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf(format, a...)}
}

// noMethod answers a method the capability does not have.
func noMethod(key, method, has string) *protocol.Error {
	return &protocol.Error{Code: protocol.CodeMethodNotFound, Message: fmt.Sprintf("%s has no method %q (it has: %s)", key, method, has)}
}

// audit records the outcome of a call on target: allowed with message,
// or err, denied when its reason is "denied" and failed otherwise.
func audit(ctx context.Context, target, message string, err *protocol.Error) {
	e := observe.Event{Target: target, State: observe.AuditAllowed, Message: message}
	if err != nil {
		e.State, e.Message, e.Err = observe.AuditFailed, "", err
		var d struct{ Reason string }
		if json.Unmarshal(err.Data, &d) == nil && d.Reason == reasonDenied {
			e.State = observe.AuditDenied
		}
	}
	observe.Audit(ctx, e)
}

// decodeStrict decodes a config object into v, refusing unknown keys.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the object")
	}
	return nil
}
