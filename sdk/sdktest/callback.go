package sdktest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// caseCallbacks reports the plugin's own calls into the host
// (capability/call, protocol 1.1, docs/protocol.md §5.11), which the suite
// answers as a stub host.
const caseCallbacks = "callbacks"

// stubHost answers a plugin's capability/call as the host would route it,
// without a provider behind it: a call of a capability the manifest
// requires is answered {"output": null}; one it does not require -32005,
// in the host's words (wire.NotAuthorized); malformed params -32602. It records what it saw
// for the callbacks case.
type stubHost struct {
	plugin   string   // the plugin's name, as the host's refusals name it
	requires []string // the manifest's required capability keys
	// features are the wire.Features the plugin uses (§4.6), stored once
	// its answer to initialize was read: as the kernel, the stub host
	// refuses a call of a plugin that did not announce "calls" (-32601),
	// or a stream it asks for without "streams" (-32602).
	features atomic.Uint32
}

// takeFeatures records the features of the plugin's answer to
// initialize, result: those it announced when it answered 1.4.0 or later,
// else those of 1.3. The reader calls it before it reads on.
func (h *stubHost) takeFeatures(result json.RawMessage) {
	var res protocol.InitializeResult
	if json.Unmarshal(result, &res) != nil {
		return
	}
	f := wire.Features13
	if wire.Announces(res.ProtocolVersion) {
		f = wire.ParseFeatures(res.Features)
	}
	h.features.Store(uint32(f))
}

// newStubHost returns the stub host of pkg's plugin.
func newStubHost(pkg *pluginpkg.Package) *stubHost {
	h := &stubHost{plugin: pkg.Name}
	for _, r := range pkg.Manifest.Requires {
		h.requires = append(h.requires, string(r.Key))
	}
	return h
}

// callback is one capability/call the plugin made.
type callback struct {
	name    string // capability.method, quoted for reasons
	problem string // a MUST the call broke, else ""
	refused string // why the stub host refused it (not required), else ""
	window  int    // the stream window it asked for, 0 for none
	unacked string // a consumer's SHOULD its stream broke, else ""
}

// uses reports whether the plugin uses (announced, or before 1.4 is
// taken to use) the feature f.
func (h *stubHost) uses(f wire.Features) bool { return wire.Features(h.features.Load()).Has(f) }

// answer decodes the call m, records it and returns the stub host's answer.
func (h *stubHost) answer(m *wire.Message, inFlight func(id json.RawMessage) bool) (callback, *wire.Message) {
	reply := func(res json.RawMessage, e *protocol.Error) *wire.Message {
		return &wire.Message{JSONRPC: wire.JSONRPCVersion, ID: m.ID, Result: res, Error: e}
	}
	var p wire.CapabilityCallParams
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Capability == "" || p.Method == "" {
		cb := callback{name: "capability/call", problem: "params must name a capability and a method (§5.11)"}
		return cb, reply(nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: cb.problem})
	}
	cb := callback{name: strconv.Quote(p.Capability + "." + p.Method)}
	uses := wire.Features(h.features.Load())
	switch {
	case !uses.Has(wire.HasCalls):
		cb.problem = fmt.Sprintf("capability/call without announcing the %q feature in initialize (§4.6)", wire.FeatureCalls)
		return cb, reply(nil, &protocol.Error{Code: protocol.CodeMethodNotFound, Message: cb.problem})
	case p.Stream != nil && !uses.Has(wire.HasStreams):
		cb.problem = fmt.Sprintf("a stream asked for without announcing the %q feature in initialize (§4.6)", wire.FeatureStreams)
	case contribution.ValidateProviderRef(p.Method) != nil:
		cb.problem = fmt.Sprintf("method %q is not an identifier (§4.5)", p.Method)
	case len(p.Parent) > 0 && string(p.Parent) != "null" && !inFlight(p.Parent):
		cb.problem = fmt.Sprintf("parent %s names no host request in flight (§5.11)", p.Parent)
	case p.Stream != nil && (p.Stream.Window < 1 || p.Stream.Window > wire.MaxStreamWindow):
		cb.problem = fmt.Sprintf("stream window %d is not between 1 and %d (§5.12)", p.Stream.Window, wire.MaxStreamWindow)
	case p.Stream != nil:
		cb.window = p.Stream.Window
	}
	if cb.problem != "" {
		return cb, reply(nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: cb.problem})
	}
	if !slices.Contains(h.requires, p.Capability) {
		cb.refused = fmt.Sprintf("capability %q is not in the manifest's requires", p.Capability)
		return cb, reply(nil, wire.NotAuthorized(h.plugin, p.Capability, p.Method)) // the host's words
	}
	return cb, reply(json.RawMessage(`{"output":null}`), nil)
}

// callbacks reports the plugin's calls into the host over every start: a
// malformed one fails (a MUST of §5.11), one of a capability the manifest
// does not require warns (the host refuses it), none at all passes.
func (r *runner) callbacks() {
	var calls []callback
	for _, s := range r.sessions {
		calls = append(calls, s.callbacks()...)
	}
	var problems, refused, unacked, names []string
	for _, c := range calls {
		switch {
		case c.problem != "":
			problems = append(problems, c.name+": "+c.problem)
		case c.refused != "":
			refused = append(refused, c.name+": "+c.refused)
		case c.unacked != "":
			unacked = append(unacked, c.name+" (a stream): "+c.unacked)
		}
		if !slices.Contains(names, c.name) {
			names = append(names, c.name)
		}
	}
	slices.Sort(names)
	switch {
	case len(problems) > 0:
		r.add(Case{Name: caseCallbacks, Status: Fail, Reason: "a call into the host is malformed: " + joinLimited(problems, 3)})
	case len(refused) > 0 || len(unacked) > 0:
		var warns []string
		if len(refused) > 0 {
			warns = append(warns, "the host refuses a call (-32005): "+joinLimited(refused, 3))
		}
		if len(unacked) > 0 {
			warns = append(warns, "a stream of the host's was not acknowledged: "+joinLimited(unacked, 3))
		}
		r.add(Case{Name: caseCallbacks, Status: Warn, Reason: strings.Join(warns, "; ")})
	case len(calls) == 0:
		r.add(Case{Name: caseCallbacks, Status: Pass, Reason: "made no call into the host"})
	default:
		r.add(Case{Name: caseCallbacks, Status: Pass, Reason: fmt.Sprintf("%d calls into the host, each of a required capability, answered by the stub host: %s",
			len(calls), joinLimited(names, 5))})
	}
}
