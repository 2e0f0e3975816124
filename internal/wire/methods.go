package wire

import (
	"encoding/json"
	"time"
)

// Method names. Host-to-plugin requests unless noted.
const (
	// MethodInitialize is the handshake request; always the host's first frame.
	MethodInitialize = "initialize"
	// MethodIntercept runs an interceptor at a point.
	MethodIntercept = "intercept"
	// MethodStrategyInvoke invokes the plugin's claim on a strategy slot.
	MethodStrategyInvoke = "strategy/invoke"
	// MethodProviderInvoke calls one of the plugin's providers.
	MethodProviderInvoke = "provider/invoke"
	// MethodActionRun runs one of the plugin's UI actions.
	MethodActionRun = "action/run"
	// MethodPing is the heartbeat; the result is an empty object.
	MethodPing = "ping"
	// MethodShutdown asks the plugin to finish and exit; the plugin answers,
	// then exits once stdin closes.
	MethodShutdown = "shutdown"
	// MethodCancel is a notification (either direction) cancelling the
	// request whose id it names.
	MethodCancel = "$/cancel"
	// MethodLog is a plugin-to-host notification carrying a structured log
	// record.
	MethodLog = "log"
	// MethodNotify is a plugin-to-host notification carrying an event.
	MethodNotify = "notify"
	// MethodCapabilityCall is a plugin-to-host request (protocol 1.1)
	// calling a method of a capability the plugin requires.
	MethodCapabilityCall = "capability/call"
	// MethodStreamChunk is a notification (either direction, protocol 1.1)
	// carrying one chunk of the stream that answers a request: sent by the
	// side answering the request, with its id.
	MethodStreamChunk = "$/stream/chunk"
	// MethodStreamAck is a notification (either direction, protocol 1.1)
	// granting credit on a stream: sent by the side that sent the request,
	// it says that the chunks up to seq were consumed.
	MethodStreamAck = "$/stream/ack"
	// MethodProgress is a plugin-to-host notification (protocol 1.3)
	// reporting progress on the host request whose id it names: each one
	// extends that request's own timeout, up to the host's maximum call
	// duration (docs/protocol.md §5.15).
	MethodProgress = "$/progress"
)

// Defaults of the bounds of what a plugin makes a host hold
// (pluginpkg.ResourceLimits, docs/security.md).
const (
	// DefaultQueueBytes bounds the frames a host keeps queued toward one
	// plugin.
	DefaultQueueBytes = 4 << 20
	// DefaultStreamWindowBytes bounds the chunk data a consumer holds for
	// one stream (window_bytes, protocol 1.2).
	DefaultStreamWindowBytes = 1 << 20
)

// Stream windows (docs/protocol.md §5.12): how many chunks a producer may
// send beyond the last one the consumer acknowledged.
const (
	// DefaultStreamWindow is the window the host and the SDKs ask for
	// unless told otherwise.
	DefaultStreamWindow = 16
	// MaxStreamWindow is the largest window a stream request may ask for;
	// a larger one (or one below 1) is invalid params.
	MaxStreamWindow = 1024
)

// Default timeouts, documented in docs/protocol.md.
const (
	// DefaultHandshakeTimeout bounds initialize unless the manifest says
	// otherwise (it may not exceed MaxHandshakeTimeout).
	DefaultHandshakeTimeout = 10 * time.Second
	// MaxHandshakeTimeout is the largest handshake_timeout a manifest may set.
	MaxHandshakeTimeout = 60 * time.Second
	// DefaultCallTimeout bounds a call whose context has no deadline.
	DefaultCallTimeout = 30 * time.Second
	// DefaultShutdownGrace is how long a plugin has to exit after shutdown
	// and stdin closing, before SIGTERM.
	DefaultShutdownGrace = 2 * time.Second
	// DefaultKillGrace is how long a plugin has after SIGTERM before SIGKILL.
	DefaultKillGrace = 2 * time.Second
	// DefaultWriteStall is how long a write to a plugin's stdin may block
	// before the plugin is treated as wedged and stopped.
	DefaultWriteStall = 5 * time.Second
	// DefaultHeartbeatInterval is the time between two heartbeat pings of
	// a running plugin (VS Code's extension host pings every 3 s).
	DefaultHeartbeatInterval = 3 * time.Second
	// DefaultHeartbeatTimeout is how long a heartbeat ping may go
	// unanswered before the plugin is reported unresponsive (VS Code: 3 s).
	DefaultHeartbeatTimeout = 3 * time.Second
	// DefaultHangTimeout is how long a pinged plugin may answer nothing
	// before it is stopped as hung (VS Code: 10 s).
	DefaultHangTimeout = 10 * time.Second
	// DefaultMaxCallDuration is the longest a host request may run when
	// its plugin's $/progress notifications keep extending its timeout
	// (protocol 1.3): progress never extends a call past its start plus
	// this, or plus its own timeout when that is longer.
	DefaultMaxCallDuration = 10 * time.Minute
)

// The params of the host's calls (and of a plugin's capability/call) may
// carry Traceparent, a W3C Trace Context traceparent header value
// (docs/protocol.md §5.13): the span the call is part of. It is optional
// on both sides.

// InterceptParams are the params of intercept.
type InterceptParams struct {
	Point       string          `json:"point"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Traceparent string          `json:"traceparent,omitempty"`
}

// StrategyInvokeParams are the params of strategy/invoke.
type StrategyInvokeParams struct {
	Slot        string          `json:"slot"`
	Input       json.RawMessage `json:"input,omitempty"`
	Traceparent string          `json:"traceparent,omitempty"`
}

// ProviderInvokeParams are the params of provider/invoke. Ref is the
// plugin-local ref, without the "plugin/<name>/" namespace.
type ProviderInvokeParams struct {
	Ref         string          `json:"ref"`
	Input       json.RawMessage `json:"input,omitempty"`
	Traceparent string          `json:"traceparent,omitempty"`
	// Stream, when set (protocol 1.1), asks for the answer as a stream of
	// chunks (docs/protocol.md §5.12).
	Stream *StreamParams `json:"stream,omitempty"`
}

// ActionRunParams are the params of action/run.
type ActionRunParams struct {
	ID          string          `json:"id"`
	Context     json.RawMessage `json:"context,omitempty"`
	Traceparent string          `json:"traceparent,omitempty"`
}

// CapabilityCallParams are the params of capability/call (protocol 1.1).
// Parent, when present, is the id of the host request the plugin is
// serving; the call derives its deadline, cancellation, generation and
// depth from it.
type CapabilityCallParams struct {
	Capability  string          `json:"capability"`
	Method      string          `json:"method"`
	Input       json.RawMessage `json:"input,omitempty"`
	Parent      json.RawMessage `json:"parent,omitempty"`
	Traceparent string          `json:"traceparent,omitempty"`
	// Stream, when set, asks for the callee's answer as a stream of
	// chunks, relayed by the host (docs/protocol.md §5.12).
	Stream *StreamParams `json:"stream,omitempty"`
}

// StreamParams is the "stream" member of a request that asks for a stream
// (protocol 1.1): Window is how many chunks the producer may send beyond
// the last one acknowledged, in [1, MaxStreamWindow].
type StreamParams struct {
	Window int `json:"window"`
	// WindowBytes, when set (protocol 1.2), bounds the chunk data the
	// producer may have unacknowledged, besides its chunks.
	WindowBytes int64 `json:"window_bytes,omitempty"`
}

// StreamChunkParams are the params of $/stream/chunk: ID is the id of the
// request the stream answers, Seq the chunk's number (1, 2, ... with no
// gap) and Data the chunk, any JSON value.
type StreamChunkParams struct {
	ID   json.RawMessage `json:"id"`
	Seq  int64           `json:"seq"`
	Data json.RawMessage `json:"data"`
}

// StreamAckParams are the params of $/stream/ack: the chunks of the
// stream answering request ID were consumed up to Seq, so the producer
// may send up to Seq + window.
type StreamAckParams struct {
	ID  json.RawMessage `json:"id"`
	Seq int64           `json:"seq"`
}

// OutputResult is the result of strategy/invoke, provider/invoke and
// action/run.
type OutputResult struct {
	Output json.RawMessage `json:"output,omitempty"`
}

// NotifyParams are the params of the notify notification.
type NotifyParams struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// CancelParams are the params of $/cancel.
type CancelParams struct {
	ID json.RawMessage `json:"id"`
}

// ProgressParams are the params of $/progress (protocol 1.3): ID is the
// id of the host request in flight the plugin reports progress on;
// Message and Fraction (in [0, 1]) are optional.
type ProgressParams struct {
	ID       json.RawMessage `json:"id"`
	Message  string          `json:"message,omitempty"`
	Fraction *float64        `json:"fraction,omitempty"`
}

// LogParams are the params of the log notification. Level is one of trace,
// debug, info, warn, error.
type LogParams struct {
	Level   string         `json:"level"`
	Message string         `json:"message"`
	Fields  map[string]any `json:"fields,omitempty"`
}

// Empty is the params and the result of ping and shutdown: an empty JSON
// object. Receivers ignore members they do not know.
type Empty struct{}

// MethodContributionInvoke is a host-to-plugin request (protocol 1.1)
// invoking one of the plugin's contributions of a host-declared kind.
const MethodContributionInvoke = "contribution/invoke"

// ContributionInvokeParams are the params of contribution/invoke (protocol
// 1.1): the kind and key the plugin declared in its handshake, as it
// declared them. Its result is an OutputResult.
type ContributionInvokeParams struct {
	Kind        string          `json:"kind"`
	Key         string          `json:"key"`
	Input       json.RawMessage `json:"input,omitempty"`
	Traceparent string          `json:"traceparent,omitempty"`
}
