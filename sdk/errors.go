package sdk

import (
	"fmt"

	"github.com/extkernel/extkernel/protocol"
)

// Errorf returns a *protocol.Error with the given code and the message
// fmt.Sprintf(format, a...). Returned by a handler (or wrapped), it answers
// the host's request with that code and message, where any other error is
// answered with protocol.CodePluginError:
//
//	return nil, sdk.Errorf(protocol.CodeInvalidParams, "input: %v", err)
//
// It is &protocol.Error{Code: code, Message: fmt.Sprintf(format, a...)},
// the form a host's handler writes. The message is text: format a cause
// with %v, not %w (a *protocol.Error wraps nothing).
func Errorf(code int, format string, a ...any) *protocol.Error {
	return &protocol.Error{Code: code, Message: fmt.Sprintf(format, a...)}
}
