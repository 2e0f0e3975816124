package admin

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
)

// ContributionsAnswer is the answer of GET /v1/contributions: everything
// POST /v1/call can call in the current generation.
type ContributionsAnswer struct {
	Generation uint64 `json:"generation"`
	// Contributions holds every callable contribution, and every point and
	// slot the host declares that no plugin contributes to (an intercept
	// there returns the payload unchanged, a strategy the host default),
	// sorted by call kind (intercept, strategy, provider, action, then the
	// host's kinds by name), target and plugin. With ?plugin=NAME only
	// that plugin's.
	Contributions []Callable `json:"contributions"`
}

// Callable is one contribution as POST /v1/call calls it: {"kind": Call,
// "target": Target}.
type Callable struct {
	// Call is the kind to give POST /v1/call: intercept, strategy,
	// provider, action, or a kind the host declares (config.md,
	// "Host-defined kinds").
	Call string `json:"call"`
	// Target is the target to give POST /v1/call: the point, the slot, the
	// provider or action ID, or a host kind's key.
	Target string `json:"target"`
	// Kind is the contribution's kind: interceptor, strategy, provider,
	// action or the host kind; "point" or "slot" for a target the host
	// declares that no plugin contributes to.
	Kind string `json:"kind"`
	// Plugin is the contributing plugin, omitted for a declared target
	// without contribution and for the host's own.
	Plugin string `json:"plugin,omitempty"`
	// Priority orders an interceptor, or a contribution of an ordered host
	// kind, among those at its target: higher runs first.
	Priority int `json:"priority,omitempty"`
	// Title is an action's or a host kind contribution's title;
	// Description a provider's; Placement an action's.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Placement   string `json:"placement,omitempty"`
	// InputSchema is the JSON Schema of the input, where the plugin
	// declared one: a provider's schema, or a host kind contribution's
	// data.input_schema. OutputSchema is a host kind contribution's
	// data.output_schema (the protocol has no output schema for the
	// built-in kinds).
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// Data is a host kind contribution's data, as the plugin declared it.
	Data json.RawMessage `json:"data,omitempty"`
}

// callKindOf maps a contribution kind to the kind POST /v1/call takes.
var callKindOf = map[contribution.Kind]string{
	contribution.KindInterceptor: KindIntercept, contribution.KindStrategy: KindStrategy,
	contribution.KindProvider: KindProvider, contribution.KindAction: KindAction,
}

// callOrder sorts the built-in call kinds first, in the order `kernelctl
// call` names them.
var callOrder = map[string]int{KindIntercept: 1, KindStrategy: 2, KindProvider: 3, KindAction: 4}

func (s *Server) contributions(w http.ResponseWriter, r *http.Request) {
	g := s.k.Current()
	if g == nil {
		s.fail(w, kernelError(s.notRunning()))
		return
	}
	plugin := r.URL.Query().Get("plugin")
	a := ContributionsAnswer{Generation: g.Number(), Contributions: []Callable{}}
	for _, c := range callables(g) {
		if plugin == "" || c.Plugin == plugin {
			a.Contributions = append(a.Contributions, c)
		}
	}
	s.answer(w, a)
}

// callables lists what g can call, sorted (ContributionsAnswer).
func callables(g *generation.Generation) []Callable {
	reg := g.Registry()
	var out []Callable
	seen := map[[2]string]bool{}
	for _, c := range reg.All() { // in effect: overridden ones are apart
		cl := callable(c)
		seen[[2]string{cl.Call, cl.Target}] = true
		out = append(out, cl)
	}
	for _, p := range reg.Points() {
		if !seen[[2]string{KindIntercept, string(p)}] {
			out = append(out, Callable{Call: KindIntercept, Target: string(p), Kind: "point"})
		}
	}
	for _, sl := range reg.Slots() {
		if !seen[[2]string{KindStrategy, string(sl)}] {
			out = append(out, Callable{Call: KindStrategy, Target: string(sl), Kind: "slot"})
		}
	}
	slices.SortStableFunc(out, func(x, y Callable) int {
		return cmp.Or(cmp.Compare(cmp.Or(callOrder[x.Call], 5), cmp.Or(callOrder[y.Call], 5)),
			cmp.Compare(x.Call, y.Call), cmp.Compare(x.Target, y.Target), -cmp.Compare(x.Priority, y.Priority),
			cmp.Compare(x.Plugin, y.Plugin))
	})
	return out
}

// callable describes one contribution.
func callable(c contribution.Contribution) Callable {
	cl := Callable{Call: cmp.Or(callKindOf[c.Kind], string(c.Kind)), Target: c.Key, Kind: string(c.Kind), Plugin: c.Source.Plugin}
	switch p := c.Payload.(type) {
	case contribution.Interceptor:
		cl.Priority = c.Priority
	case contribution.Provider:
		cl.Description = p.Description
		if p.Schema != "" {
			cl.InputSchema = json.RawMessage(p.Schema)
		}
	case contribution.Action:
		cl.Title, cl.Placement = p.Title, p.Placement
	case contribution.Custom:
		cl.Priority, cl.Title = c.Priority, p.Title
		if p.Data != "" {
			cl.Data = json.RawMessage(p.Data)
			var schemas struct {
				In  json.RawMessage `json:"input_schema"`
				Out json.RawMessage `json:"output_schema"`
			}
			if json.Unmarshal(cl.Data, &schemas) == nil {
				cl.InputSchema, cl.OutputSchema = schemas.In, schemas.Out
			}
		}
	}
	return cl
}

// invokeHostKind calls every contribution of a host-declared kind at the
// target (kernel.Kernel.InvokeEach), into a.Answers. A kind no
// contribution of the current generation has is refused as a bad
// request: not a kind the call can reach (a typo of a built-in call kind,
// most likely); a target none has is CodeUnknownTarget.
func (s *Server) invokeHostKind(ctx context.Context, a *CallAnswer, req CallRequest, input json.RawMessage) (*CallAnswer, *Error) {
	g := s.k.Current()
	kind := contribution.Kind(req.Kind)
	if g == nil || kind.Builtin() || len(g.Registry().OfKind(kind)) == 0 {
		gen := ""
		if g != nil {
			gen = fmt.Sprintf(" in generation %d", g.Number())
		}
		return nil, &Error{Status: http.StatusBadRequest, Code: CodeBadRequest,
			Message: fmt.Sprintf("call: kind %q is not provider, action, strategy, intercept or a host kind a plugin contributes to%s",
				req.Kind, gen)}
	}
	answers, err := s.k.InvokeEach(ctx, kind, req.Target, input)
	if err != nil {
		return nil, kernelError(err)
	}
	if len(answers) == 0 {
		return nil, &Error{Status: http.StatusNotFound, Code: CodeUnknownTarget, Generation: g.Number(),
			Message: fmt.Sprintf("%s %q: no plugin contributes it in generation %d", req.Kind, req.Target, g.Number())}
	}
	a.Generation = g.Number()
	for _, ans := range answers {
		ka := KindAnswer{Plugin: ans.Plugin, Output: ans.Output}
		if ans.Err != nil {
			ka.Error = ans.Err.Error()
		}
		a.Answers = append(a.Answers, ka)
	}
	return a, nil
}

// KindAnswer is one contribution's answer to a call of a host kind
// (CallAnswer.Answers).
type KindAnswer struct {
	// Plugin is the plugin whose contribution answered.
	Plugin string `json:"plugin"`
	// Output is what it returned, omitted when nothing or when it failed.
	Output json.RawMessage `json:"output,omitempty"`
	// Error is the failure of an optional plugin, skipped: the call went
	// on to the next contribution.
	Error string `json:"error,omitempty"`
}
