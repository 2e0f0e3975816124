package wire

import (
	"fmt"

	"github.com/extkernel/extkernel/protocol"
)

// The host's refusals of a plugin's capability/call (docs/protocol.md
// §5.11), in the words the kernel answers them with: the conformance
// suite's stub host answers with the same, and protocol.md's examples are
// checked against them (protocol/docs_test.go).

// NotAuthorized is the -32005 answer to plugin caller's call of method of
// capability, which its manifest does not require.
func NotAuthorized(caller, capability, method string) *protocol.Error {
	return &protocol.Error{Code: protocol.CodeNotAuthorized, Message: fmt.Sprintf(
		"plugin %q may not call %q: its manifest does not require capability %q", caller, capability+"."+method, capability)}
}

// NotAvailable is the -32006 answer to plugin caller's call of method of
// capability, which it requires but which no provider serves; why says
// what is missing ("optional requirement not satisfied").
func NotAvailable(caller, capability, method, why string) *protocol.Error {
	return &protocol.Error{Code: protocol.CodeNotAvailable, Message: fmt.Sprintf(
		"capability %q is not available to plugin %q (call of %q): %s", capability, caller, capability+"."+method, why)}
}
