package protocol

import (
	"encoding/json"
	"time"
)

// Version is the protocol version this package implements. It is checked
// against a manifest's "kernel" constraint and sent in initialize.
const Version = "1.0.0"

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
)

// HostInfo identifies the host program in initialize.
type HostInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// PluginInfo tells the plugin who the host believes it is.
type PluginInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// DataDir is a directory the plugin may write to; it persists across
	// restarts.
	DataDir string `json:"data_dir"`
}

// InitializeParams are the params of initialize.
type InitializeParams struct {
	ProtocolVersion string            `json:"protocol_version"`
	Host            HostInfo          `json:"host"`
	Plugin          PluginInfo        `json:"plugin"`
	Config          json.RawMessage   `json:"config,omitempty"`
	Session         map[string]string `json:"session,omitempty"`
}

// InitializeResult is the plugin's answer to initialize: its identity and
// its declarations. Declarations outside what the manifest authorizes are a
// handshake error.
type InitializeResult struct {
	ProtocolVersion string            `json:"protocol_version"`
	Name            string            `json:"name"`
	Version         string            `json:"version"`
	Provides        []CapabilityDecl  `json:"provides,omitempty"`
	Interceptors    []InterceptorDecl `json:"interceptors,omitempty"`
	Strategies      []StrategyDecl    `json:"strategies,omitempty"`
	Providers       []ProviderDecl    `json:"providers,omitempty"`
	Actions         []ActionDecl      `json:"actions,omitempty"`
}

// CapabilityDecl is a capability version the plugin actually provides.
type CapabilityDecl struct {
	Capability string `json:"capability"`
	Version    string `json:"version"`
}

// InterceptorDecl declares an interceptor at a point. A nil Priority means
// the manifest's runtime priority.
type InterceptorDecl struct {
	Point    string `json:"point"`
	Priority *int   `json:"priority,omitempty"`
}

// StrategyDecl claims a strategy slot.
type StrategyDecl struct {
	Slot string `json:"slot"`
}

// ProviderDecl declares a provider. The host namespaces it as
// "plugin/<name>/<ref>".
type ProviderDecl struct {
	Ref         string          `json:"ref"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
}

// ActionDecl declares a UI action.
type ActionDecl struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Placement string `json:"placement,omitempty"`
}

// InterceptParams are the params of intercept.
type InterceptParams struct {
	Point   string          `json:"point"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Interceptor decisions.
const (
	DecisionContinue = "continue"
	DecisionModify   = "modify"
	DecisionDeny     = "deny"
)

// InterceptResult is an interceptor's decision. With DecisionModify, Payload
// replaces the payload the next interceptor sees; with DecisionDeny, Reason
// says why and the chain stops.
type InterceptResult struct {
	Decision string          `json:"decision"`
	Payload  json.RawMessage `json:"payload,omitempty"`
	Reason   string          `json:"reason,omitempty"`
}

// StrategyInvokeParams are the params of strategy/invoke.
type StrategyInvokeParams struct {
	Slot  string          `json:"slot"`
	Input json.RawMessage `json:"input,omitempty"`
}

// ProviderInvokeParams are the params of provider/invoke. Ref is the
// plugin-local ref, without the "plugin/<name>/" namespace.
type ProviderInvokeParams struct {
	Ref   string          `json:"ref"`
	Input json.RawMessage `json:"input,omitempty"`
}

// ActionRunParams are the params of action/run.
type ActionRunParams struct {
	ID      string          `json:"id"`
	Context json.RawMessage `json:"context,omitempty"`
}

// OutputResult is the result of strategy/invoke, provider/invoke and
// action/run.
type OutputResult struct {
	Output json.RawMessage `json:"output,omitempty"`
}

// CancelParams are the params of $/cancel.
type CancelParams struct {
	ID json.RawMessage `json:"id"`
}

// LogParams are the params of the log notification. Level is one of trace,
// debug, info, warn, error.
type LogParams struct {
	Level   string         `json:"level"`
	Message string         `json:"message"`
	Fields  map[string]any `json:"fields,omitempty"`
}

// NotifyParams are the params of the notify notification.
type NotifyParams struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// Empty is the params and the result of ping and shutdown: an empty JSON
// object. Receivers ignore members they do not know.
type Empty struct{}
