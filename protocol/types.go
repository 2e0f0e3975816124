package protocol

import "encoding/json"

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
	// Features (protocol 1.4) names the optional protocol features the
	// host serves ("calls", "cancel", "contributions", "progress",
	// "streams", "trace"; docs/protocol.md §4.6): a plugin uses one only
	// when it is listed. A host before 1.4 sends none; its features are
	// those its version implies.
	Features []string `json:"features,omitempty"`
}

// InitializeResult is the plugin's answer to initialize: its identity and
// its declarations. Declarations outside what the manifest authorizes are a
// handshake error. Contributions (protocol 1.1) is sent only to a host whose
// protocol_version is 1.1.0 or later; a 1.0 plugin never sends it.
// Features (protocol 1.4) names the optional protocol features the plugin
// uses (docs/protocol.md §4.6); the host reads it only from an answer of
// 1.4.0 or later, and takes an earlier one to use every feature of 1.3.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocol_version"`
	Name            string             `json:"name"`
	Version         string             `json:"version"`
	Provides        []CapabilityDecl   `json:"provides,omitempty"`
	Interceptors    []InterceptorDecl  `json:"interceptors,omitempty"`
	Strategies      []StrategyDecl     `json:"strategies,omitempty"`
	Providers       []ProviderDecl     `json:"providers,omitempty"`
	Actions         []ActionDecl       `json:"actions,omitempty"`
	Contributions   []ContributionDecl `json:"contributions,omitempty"`
	Features        []string           `json:"features,omitempty"`
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
