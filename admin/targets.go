package admin

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
)

// targets returns what a call of kind may name in generation g: the
// points (intercept) or slots (strategy) the host declares or a plugin
// contributes to, or the IDs of the providers or actions.
func targets(g *generation.Generation, kind string) []string {
	reg := g.Registry()
	var out []string
	add := func(k contribution.Kind) {
		for _, c := range reg.OfKind(k) {
			out = append(out, c.Key)
		}
	}
	switch kind {
	case KindIntercept:
		for _, p := range reg.Points() {
			out = append(out, string(p))
		}
		add(contribution.KindInterceptor)
	case KindStrategy:
		for _, s := range reg.Slots() {
			out = append(out, string(s))
		}
		add(contribution.KindStrategy)
	case KindProvider:
		add(contribution.KindProvider)
	case KindAction:
		add(contribution.KindAction)
	default:
		if k := contribution.Kind(kind); !k.Builtin() {
			add(k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// unknownPointOrSlot refuses a call of a point or slot that the host does
// not declare and no plugin contributes to in g (a typo, most likely: the
// kernel would run no interceptor, or the host's default), with
// CodeUnknownTarget naming the closest one.
func unknownPointOrSlot(g *generation.Generation, req CallRequest) *Error {
	what := map[string]string{KindIntercept: "point", KindStrategy: "slot"}[req.Kind]
	known := targets(g, req.Kind)
	if what == "" || slices.Contains(known, req.Target) {
		return nil
	}
	return &Error{Status: http.StatusNotFound, Code: CodeUnknownTarget, Generation: g.Number(),
		Message: fmt.Sprintf("%s %q: the host declares no such %s and no plugin contributes to it in generation %d%s",
			what, req.Target, what, g.Number(), didYouMean(req.Target, known))}
}
