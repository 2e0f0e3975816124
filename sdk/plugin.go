package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// InterceptFunc handles an intercept call at point with the payload the
// host (or the previous interceptor) produced. It returns the decision; a
// non-nil error answers the call with an error instead (see the package doc,
// # Errors). ctx is cancelled when the host cancels the call or the plugin
// stops.
type InterceptFunc func(ctx context.Context, point string, payload json.RawMessage) (protocol.InterceptResult, error)

// HandlerFunc handles a strategy, provider or action call. input is the
// call's input (the action's context for actions), possibly empty. The
// returned value is marshalled to JSON into OutputResult.Output; a nil value
// omits it, a json.RawMessage is sent as is. ctx is cancelled when the host
// cancels the call or the plugin stops.
type HandlerFunc func(ctx context.Context, input json.RawMessage) (any, error)

// InitializeFunc is the optional hook run while answering initialize, with
// the host's parameters (config, data dir, session). A non-nil error fails
// the handshake with that error.
type InitializeFunc func(ctx context.Context, params protocol.InitializeParams) error

// Plugin is one plugin: its identity, its declarations and their handlers.
// Create it with New, register declarations, then call Serve. The zero
// value is not usable.
//
// Registration methods panic on programmer errors (an empty name, a nil
// handler, a duplicate, a call while serving), like http.ServeMux.Handle.
type Plugin struct {
	name, version string
	def           defaultLogger // the logger until SetLogger, created on first use

	mu struct {
		sync.Mutex
		logger  *slog.Logger // SetLogger's; nil: def
		reg     registry
		onInit  InitializeFunc
		serving *session // non-nil while ServeIO runs
	}
}

// New returns a plugin with the given name and version, which the SDK
// answers initialize with. An empty name or version is taken from the
// environment the kernel starts the plugin with (docs/protocol.md §10):
// EXTKERNEL_PLUGIN_NAME and EXTKERNEL_PLUGIN_VERSION, the manifest's, so
// New("", "") keeps one version number, the manifest's. A non-empty value
// wins over the environment; it should match the manifest's (a different
// name fails the handshake, a different version is a warning of the
// generation). Outside a kernel, with neither given nor set, both stay
// empty and the handshake fails.
//
// Its logger writes JSON lines in hclog's format (the host's) to stderr at
// info level. That logger is created when first used (by Logger, or by a
// line the SDK logs at info level or above), not by New: a plugin that
// never logs does not pay for it at start.
func New(name, version string) *Plugin {
	if name == "" {
		name = os.Getenv(wire.EnvPluginName)
	}
	if version == "" {
		version = os.Getenv(wire.EnvPluginVersion)
	}
	p := &Plugin{name: name, version: version}
	p.mu.reg = newRegistry()
	return p
}

// Logger returns the plugin's logger: the one set with SetLogger, else
// the default, which writes JSON lines in hclog's format to stderr
// (@timestamp, @level, @message, @module and the line's fields: the host
// parses them keeping level and fields), created on the first call.
func (p *Plugin) Logger() *slog.Logger {
	p.mu.Lock()
	l := p.mu.logger
	p.mu.Unlock()
	if l == nil {
		return p.def.get(p.name)
	}
	return l
}

// SetLogger replaces the plugin's logger, e.g. to change its level or to
// silence it in tests. It MUST NOT write to stdout. A ServeIO already
// running keeps the logger it started with. nil restores the default.
func (p *Plugin) SetLogger(l *slog.Logger) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.logger = l
}

// defaultLogger is a plugin's default logger: JSON lines in hclog's format
// to stderr at info level, named after the plugin. It is created on first
// use, not by New, and it is log/slog's, not hclog's: a plugin that
// imports go-hclog pays for its package initialisation (a regular
// expression compiled, about half a millisecond) at every cold start
// (BENCHMARKS.md, "Issue 26, item 11"). The zero value is ready.
type defaultLogger struct {
	once    sync.Once
	created atomic.Bool // set once l is
	l       *slog.Logger
}

// get returns the default logger of the plugin name, creating it.
func (d *defaultLogger) get(name string) *slog.Logger {
	d.once.Do(func() {
		d.l = slog.New(hclogJSON(os.Stderr, name, slog.LevelInfo))
		d.created.Store(true)
	})
	return d.l
}

// forLevel returns the default logger for a line at level, or nil when the
// line would be dropped and the logger was not created yet: its level is
// below Info, the level it is created with (a caller who changed that level
// got it from Logger, which created it).
func (d *defaultLogger) forLevel(name string, level slog.Level) *slog.Logger {
	if level < slog.LevelInfo && !d.created.Load() {
		return nil
	}
	return d.get(name)
}

// hclogJSON returns a handler writing to w the JSON lines hclog writes, as
// the host parses them: @timestamp, @level (trace, debug, info, warn or
// error), @message and @module (name), then the line's fields, at level
// and above. It is log/slog's JSON handler with its keys renamed.
func hclogJSON(w io.Writer, name string, level slog.Leveler) slog.Handler {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) > 0 {
			return a
		}
		switch a.Key {
		case slog.TimeKey:
			return slog.String("@timestamp", a.Value.Time().Format("2006-01-02T15:04:05.000000Z07:00"))
		case slog.LevelKey:
			l, _ := a.Value.Any().(slog.Level)
			return slog.String("@level", hclogLevel(l))
		case slog.MessageKey:
			a.Key = "@message"
		}
		return a
	}})
	return h.WithAttrs([]slog.Attr{slog.String("@module", name)})
}

// hclogLevel names a slog level as hclog does; below debug is trace.
func hclogLevel(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "trace"
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	}
	return "error"
}

// OnInitialize sets the hook run while answering initialize. Notify fails
// inside it: the handshake is not complete until initialize is answered.
func (p *Plugin) OnInitialize(fn func(ctx context.Context, params protocol.InitializeParams) error) {
	p.register("OnInitialize", func(*registry) { p.mu.onInit = fn })
}

// Provide declares that the plugin provides capability at version. The
// version must equal the manifest's provides entry or the host fails the
// handshake.
func (p *Plugin) Provide(capability, version string) {
	p.register("Provide", func(r *registry) {
		mustName("Provide", "capability", capability)
		mustName("Provide", "version", version)
		for _, c := range r.provides {
			if c.Capability == capability {
				panic(fmt.Sprintf("sdk: Provide: duplicate capability %q", capability))
			}
		}
		r.provides = append(r.provides, protocol.CapabilityDecl{Capability: capability, Version: version})
	})
}

// Intercept registers h as the interceptor at point, ordered by the
// manifest's runtime priority. The point must be listed in the manifest's
// runtime.intercepts.
func (p *Plugin) Intercept(point string, h InterceptFunc) {
	p.intercept("Intercept", point, nil, h)
}

// InterceptWithPriority is Intercept with an explicit priority overriding
// the manifest's.
func (p *Plugin) InterceptWithPriority(point string, priority int, h InterceptFunc) {
	p.intercept("InterceptWithPriority", point, &priority, h)
}

func (p *Plugin) intercept(op, point string, priority *int, h InterceptFunc) {
	p.register(op, func(r *registry) {
		mustName(op, "point", point)
		mustHandler(op, h == nil)
		if _, dup := r.intercept[point]; dup {
			panic(fmt.Sprintf("sdk: %s: duplicate point %q", op, point))
		}
		r.intercept[point] = h
		r.decls.Interceptors = append(r.decls.Interceptors, protocol.InterceptorDecl{Point: point, Priority: priority})
	})
}

// Strategy registers h as the plugin's implementation of slot. The slot
// must be listed in the manifest's runtime.replaces.
func (p *Plugin) Strategy(slot string, h HandlerFunc) {
	p.register("Strategy", func(r *registry) {
		addHandler(r.strategy, "Strategy", "slot", slot, h)
		r.decls.Strategies = append(r.decls.Strategies, protocol.StrategyDecl{Slot: slot})
	})
}

// Provider registers h as the provider ref, described by description. The
// host namespaces it as "plugin/<name>/<ref>".
func (p *Plugin) Provider(ref, description string, h HandlerFunc) {
	p.ProviderWithSchema(ref, description, nil, h)
}

// ProviderWithSchema is Provider with a JSON Schema describing the input,
// sent to the host in the declaration.
func (p *Plugin) ProviderWithSchema(ref, description string, schema json.RawMessage, h HandlerFunc) {
	p.register("Provider", func(r *registry) {
		if ref != "" {
			mustNewRef(r, "Provider", ref)
		}
		addHandler(r.provider, "Provider", "ref", ref, h)
		r.decls.Providers = append(r.decls.Providers, protocol.ProviderDecl{Ref: ref, Description: description, Schema: schema})
	})
}

// Action registers h as the UI action id, shown as title at placement
// (empty: the host's default placement). The handler's input is the
// action's context.
func (p *Plugin) Action(id, title, placement string, h HandlerFunc) {
	p.register("Action", func(r *registry) {
		mustName("Action", "title", title)
		addHandler(r.action, "Action", "id", id, h)
		r.decls.Actions = append(r.decls.Actions, protocol.ActionDecl{ID: id, Title: title, Placement: placement})
	})
}

// Notify sends a notify notification with event and data (marshalled to
// JSON) to the host. It is safe to call from any goroutine while the plugin
// serves. It returns ErrNotServing when no ServeIO runs and
// ErrHandshakeIncomplete before initialize has been answered.
func (p *Plugin) Notify(event string, data any) error {
	p.mu.Lock()
	s := p.mu.serving
	p.mu.Unlock()
	if s == nil {
		return ErrNotServing
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("notify %q: marshal data: %w", event, err)
	}
	if data == nil {
		raw = nil
	}
	return s.notify(wire.NotifyParams{Event: event, Data: raw})
}

// register runs fn on the registry under the lock, refusing while serving.
func (p *Plugin) register(op string, fn func(*registry)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.serving != nil {
		panic(fmt.Sprintf("sdk: %s called while the plugin is serving", op))
	}
	fn(&p.mu.reg)
}

func mustName(op, what, v string) {
	if v == "" {
		panic(fmt.Sprintf("sdk: %s: %s must not be empty", op, what))
	}
}

func mustHandler(op string, isNil bool) {
	if isNil {
		panic(fmt.Sprintf("sdk: %s: nil handler", op))
	}
}

func addHandler(m map[string]HandlerFunc, op, what, name string, h HandlerFunc) {
	mustName(op, what, name)
	mustHandler(op, h == nil)
	if _, dup := m[name]; dup {
		panic(fmt.Sprintf("sdk: %s: duplicate %s %q", op, what, name))
	}
	m[name] = h
}

// Continue returns the decision that passes the payload on unchanged. The
// zero InterceptResult means the same.
func Continue() protocol.InterceptResult {
	return protocol.InterceptResult{Decision: protocol.DecisionContinue}
}

// Modify returns the decision that replaces the payload with payload,
// marshalled to JSON (a json.RawMessage is used as is). If payload cannot
// be marshalled, the call fails with CodePluginError naming the cause.
func Modify(payload any) protocol.InterceptResult {
	raw, err := json.Marshal(payload)
	if err != nil {
		return protocol.InterceptResult{Decision: protocol.DecisionModify, Reason: "marshal payload: " + err.Error()}
	}
	return protocol.InterceptResult{Decision: protocol.DecisionModify, Payload: raw}
}

// Deny returns the decision that stops the chain, with reason shown to the
// user.
func Deny(reason string) protocol.InterceptResult {
	return protocol.InterceptResult{Decision: protocol.DecisionDeny, Reason: reason}
}
