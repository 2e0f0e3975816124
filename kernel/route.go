package kernel

import (
	"fmt"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/ident"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// routes is who may call what in one generation, and where each call
// goes: for each member, for each capability its manifest requires, the
// provider the closure chose for that requirement. It is built once per
// published generation (newLive) from the closure's choices, the
// providers' provides[].methods and the host's handlers, and is never
// modified: lookups take no lock. resolve is the one place that decides
// whether a plugin may call a capability's method.
type routes map[string]map[capability.Key]route

// route is where one member's calls of one required capability go.
type route struct {
	req capability.Requirement
	// provider is the chosen provider: a member's name or
	// capability.HostProvider; "" when the requirement is optional and
	// unsatisfied.
	provider string
	// methods maps each method to its provider ref, for a plugin
	// provider (its provides[].methods for the capability).
	methods map[string]string
	// handler serves a host provider's calls; nil when the host
	// registered none.
	handler capability.Handler
}

// newRoutes computes the routes of g: handlers serve the capabilities the
// host provides.
func newRoutes(g *generation.Generation, handlers map[capability.Key]capability.Handler) routes {
	r := routes{}
	for _, m := range g.Members() {
		if len(m.Package.Manifest.Requires) == 0 {
			continue
		}
		byKey := make(map[capability.Key]route, len(m.Package.Manifest.Requires))
		for _, req := range m.Package.Manifest.Requires {
			byKey[req.Key] = route{req: req}
		}
		r[m.Package.Name] = byKey
	}
	for _, ch := range g.Closure().Choices {
		byKey := r[ch.Package]
		rt, ok := byKey[ch.Requirement.Key]
		if !ok {
			continue
		}
		rt.provider = ch.Provider
		if ch.Provider == capability.HostProvider {
			rt.handler = handlers[ch.Requirement.Key]
		} else if p := g.Member(ch.Provider); p != nil {
			rt.methods = p.Package.Manifest.Methods[ch.Requirement.Key]
		}
		byKey[ch.Requirement.Key] = rt
	}
	return r
}

// resolve decides where caller's call of method of key goes: the route of
// a requirement of its manifest with a provider, and for a plugin provider
// the ref implementing the method. It refuses a capability the caller
// does not require (-32005), an optional requirement left unsatisfied or
// a host capability without a handler (-32006), a method that is no
// identifier (-32602) and a method the provider does not implement
// (-32601). key and method are the plugin's text: the answer is redacted
// on its way out (sidecar.Options.OnCall).
func (r routes) resolve(caller string, key capability.Key, method string) (route, string, *protocol.Error) {
	what := string(key) + "." + method
	rt, ok := r[caller][key]
	switch {
	case !ok:
		return route{}, "", wire.NotAuthorized(caller, string(key), method)
	case ident.ValidateDotted("method name", method) != nil:
		return route{}, "", &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("plugin %q may not call %q: %v",
			caller, what, ident.ValidateDotted("method name", method))}
	case rt.provider == "":
		return route{}, "", notAvailable(caller, key, method, "optional requirement not satisfied")
	case rt.provider == capability.HostProvider && rt.handler == nil:
		return route{}, "", notAvailable(caller, key, method, "the host provides it but registered no handler for it")
	case rt.provider == capability.HostProvider:
		return rt, "", nil
	}
	ref, ok := rt.methods[method]
	if !ok {
		return route{}, "", &protocol.Error{Code: protocol.CodeMethodNotFound, Message: fmt.Sprintf(
			"plugin %q may not call %q: its provider %q implements no method %q of capability %q (provides[].methods)",
			caller, what, rt.provider, method, key)}
	}
	return rt, ref, nil
}

// notAvailable is the -32006 answer to caller's call of method of key.
func notAvailable(caller string, key capability.Key, method, why string) *protocol.Error {
	return wire.NotAvailable(caller, string(key), method, why)
}

// checkDepth refuses a call made from frame from that would nest deeper
// than max (-32007), showing the chain of plugins from the one the host
// called to the caller.
func checkDepth(from *frame, max int, key capability.Key, method string) *protocol.Error {
	depth := from.depth + 1
	if depth <= max {
		return nil
	}
	var chain []string
	for f := from; f != nil; f = f.up {
		chain = append(chain, f.plugin)
	}
	slices.Reverse(chain)
	return &protocol.Error{Code: wire.CodeDepthExceeded, Message: fmt.Sprintf("plugin %q may not call %q: call depth exceeded (at most %d): depth %d: %s",
		from.plugin, string(key)+"."+method, max, depth, strings.Join(chain, " → "))}
}
