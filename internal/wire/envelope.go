package wire

import (
	"bytes"

	"github.com/extkernel/extkernel/internal/jsonscan"
)

// envelopeStrings are the strings the envelope's fast decoding returns
// without allocating: the JSON-RPC version and the method names.
var envelopeStrings = []string{
	JSONRPCVersion, MethodIntercept, MethodStrategyInvoke, MethodProviderInvoke, MethodActionRun,
	MethodPing, MethodCancel, MethodLog, MethodNotify, MethodInitialize, MethodShutdown, MethodCapabilityCall,
	MethodStreamChunk, MethodStreamAck,
}

// decodeMessageFast decodes line into m (which must be zero) in one pass,
// with one copy of line, which m's raw fields share, and reports whether
// it could (see package internal/jsonscan); when it cannot, DecodeMessage
// decodes with encoding/json.
func decodeMessageFast(line []byte, m *Message) bool {
	cp := bytes.Clone(line)
	return jsonscan.DecodeFields(cp, envelopeStrings, []jsonscan.Field{
		{Key: "jsonrpc", Str: &m.JSONRPC},
		{Key: "id", Raw: &m.ID},
		{Key: "method", Str: &m.Method},
		{Key: "params", Raw: &m.Params},
		{Key: "result", Raw: &m.Result},
	})
}
